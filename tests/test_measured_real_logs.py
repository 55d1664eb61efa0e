"""Real nccl-tests logs from public threads (tests/fixtures/measured/SOURCES.md), each read against a hand
reading of its rows: the variants they print (mid-line rank tags, an ``error`` column holding a
deviation, ``redop`` without ``root``, a one-rank all-to-all with ``N/A`` in one block, ``-i`` steps in
bfloat16) and two logs whose rows interleave several runs, which are refused in one line."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from ainotes.measurements.read import read_measured
from ainotes.measurements.source import MeasuredFileError

LOGS = Path(__file__).parent / "fixtures" / "measured" / "nccl-tests"


def _row(run, size: int) -> dict:
    return run.table.set_index("bytes").loc[size].to_dict()


def test_one_rank_all_to_all_with_na_in_the_in_place_block() -> None:
    run = read_measured(LOGS / "rtx5090-1rank-alltoall-na.txt", op="all-to-all")
    assert (run.op, run.ranks, run.ranks_from, run.devices) == ("all-to-all", 1, "the device lines",
                                                                 ("NVIDIA GeForce RTX 5090",))
    row = _row(run, 33554432)
    # By hand: "33554432 8388608 float none -1 19.56 1715.44 0.00 0 0.78 43046.10 0.00 N/A"
    assert (row["count"], row["dtype"], row["redop"], row["root"]) == (8388608, "float", "none", -1)
    assert (row["out_of_place_time_us"], row["out_of_place_algbw_gbps"], row["out_of_place_busbw_gbps"],
            row["out_of_place_wrong"]) == (19.56, 1715.44, 0.0, 0.0)
    assert (row["in_place_time_us"], row["in_place_algbw_gbps"], row["in_place_busbw_gbps"]) == (0.78, 43046.10, 0.0)
    assert pd.isna(row["in_place_wrong"])  # N/A: not checked
    assert run.footer_avg_busbw_gbps == 0 and run.avg_busbw_gbps == 0  # "# Avg bus bandwidth    : 0 "
    assert run.out_of_bounds == 0


def test_rank_tags_in_the_middle_of_each_row() -> None:
    run = read_measured(LOGS / "24rank-allreduce-midline-tags.txt")
    # redop sum and busbw ÷ algbw = 29.50 ÷ 15.39 on the fastest row: an all-reduce, 2(n−1)/n gives n = 24.
    assert (run.op, run.ranks, run.ranks_from) == ("all-reduce", 24, "busbw ÷ algbw")
    assert list(run.table["bytes"]) == [1048576 << k for k in range(10)]
    first, slow = _row(run, 1048576), _row(run, 67108864)
    assert (first["out_of_place_time_us"], first["out_of_place_busbw_gbps"], first["in_place_time_us"],
            first["in_place_busbw_gbps"]) == (1626.5, 1.24, 2302.3, 0.87)
    assert (slow["out_of_place_time_us"], slow["out_of_place_algbw_gbps"]) == (24410.0, 2.75)
    busbw = [1.24, 1.73, 12.91, 16.20, 24.09, 29.50, 5.27, 5.22, 4.09, 5.31,
             0.87, 9.65, 12.85, 16.31, 24.06, 28.14, 5.27, 5.30, 4.23, 5.33]
    assert run.avg_busbw_gbps == pytest.approx(sum(busbw) / len(busbw))
    assert run.footer_avg_busbw_gbps is None


def test_all_gather_in_bfloat16_with_a_step_in_bytes() -> None:
    run = read_measured(LOGS / "2gpu-allgather-bf16-steps.txt")
    assert (run.op, run.ranks, run.dtype) == ("all-gather", 2, "bfloat16")  # the command line, then (n−1)/n = 0.5
    assert list(run.table["bytes"]) == [16777216 * k for k in range(1, 8)]
    row = _row(run, 50331648)
    assert (row["count"], row["out_of_place_time_us"], row["out_of_place_busbw_gbps"], row["in_place_time_us"],
            row["in_place_busbw_gbps"]) == (12582912, 237.9, 105.78, 200.0, 125.81)


def test_an_error_column_with_a_deviation_and_no_root_column() -> None:
    run = read_measured(LOGS / "16rank-allreduce-error-column.txt")
    assert (run.op, run.ranks) == ("all-reduce", 16)  # 33.93 ÷ 18.09 = 1.8756 ≈ 2·15/16
    assert len(run.table) == 7 and run.table["root"].isna().all() and set(run.table["redop"]) == {"sum"}
    row = _row(run, 46137344)
    assert (row["out_of_place_time_us"], row["out_of_place_wrong"], row["in_place_busbw_gbps"],
            row["in_place_wrong"]) == (2549.8, 5e-07, 32.97, 5e-07)


def test_the_first_releases_layout_reads_its_times_in_milliseconds() -> None:
    run = read_measured(LOGS / "nccl1-4gpu-allreduce-first-layout.txt")
    # "bytes N type op time algbw busbw res": 10,000,000 bytes of char, sum, in 1.628 ms at 6.14 GB/s.
    assert (run.op, run.ranks, run.dtype) == ("all-reduce", 4, "char, int, half, float, double")
    first = run.table.iloc[0]
    assert (first["bytes"], first["count"], first["redop"]) == (10000000, 10000000, "sum")
    assert first["out_of_place_time_us"] == pytest.approx(1628.0) and first["in_place_time_us"] == pytest.approx(1932.0)
    assert first["bytes"] / (first["out_of_place_time_us"] * 1e-6) / 1e9 == pytest.approx(6.14, abs=0.005)
    half_prod = run.table[(run.table["dtype"] == "half") & (run.table["redop"] == "prod")].iloc[0]
    assert (half_prod["out_of_place_wrong"], half_prod["in_place_busbw_gbps"]) == (1e-03, 9.05)
    assert len(run.table) == 20


@pytest.mark.parametrize(("name", "where"), [
    ("h100-16proc-rows-repeated.txt", "h100-16proc-rows-repeated.txt:2: 134,217,728 bytes follows 134,217,728"),
    ("2node-allreduce-two-runs-interleaved.txt", "interleaved.txt:10: 16 bytes follows 512 bytes (line 9)"),
])
def test_rows_of_several_runs_interleaved_are_one_line(name: str, where: str) -> None:
    with pytest.raises(MeasuredFileError) as error:
        read_measured(LOGS / name)
    message = str(error.value)
    assert "\n" not in message and where in message and "keep one run per file" in message
