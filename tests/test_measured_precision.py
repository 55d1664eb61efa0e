"""Each measured kernel is held to the roof of the precision and units its FLOPs ran on (issue 28).

The real captures are read by hand (tests/fixtures/measured/SOURCES.md); the roofs are the fixture
presets' (tests/fixtures/measured/presets), each figure from the datasheet its file cites: the A100
80GB SXM's FP64 vector 9.7, FP32 vector 19.5 and FP16 tensor 312 TFLOP/s, 2,039 GB/s, and the A100
whitepaper's FP16 vector 78 TFLOP/s; the H100 file states no FP16 vector rate, the TPU v4 file no vector
rate at all.
"""

from __future__ import annotations

import json
import re
import shutil
from html import unescape
from pathlib import Path

import pytest

from ainotes.build.site import NotesSite
from ainotes.cli import main
from ainotes.markdown.extension import convert_page
from ainotes.measurements.ncu import matrix_precision
from ainotes.measurements.read import read_measured

FIXTURES = Path(__file__).parent / "fixtures" / "measured"
NCU = FIXTURES / "ncu"
PRESETS = FIXTURES / "presets"
# tests/fixtures/measured/presets/a100.yaml, datasheet A100 80GB SXM column (its source 1).
A100_FP64_VECTOR, A100_FP32_VECTOR, A100_FP16_TENSOR = 9.7e12, 19.5e12, 312e12
# Its source 3, the A100 whitepaper's Table 1: Peak FP16 TFLOPS (non-Tensor) 78.
A100_FP16_VECTOR = 78e12
A100_BYTES_PER_S = 2.039e12
# dropout-fp64-launches.csv, launch 0: dfma "655,360", dmul "1,048,576", dadd "0"; ffma "524,288", fadd and
# fmul "0"; no h* counts, tensor "0"; dram__bytes.sum "4,194,688" byte; gpu__time_duration.sum "11,744" nsecond.
DROPOUT_FP64_FLOPS = 2 * 655_360 + 1_048_576
DROPOUT_FP32_FLOPS = 2 * 524_288
DROPOUT_BYTES, DROPOUT_S = 4_194_688, 11_744e-9


def _json(capsys, path: Path, *flags: str) -> dict:
    assert main(["measured", str(path), "--presets-dir", str(PRESETS), *flags, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def _kernel(record: dict, launch_id: str) -> dict:
    return next(k for k in record["kernels"] if k["id"] == launch_id)


def test_the_reader_keeps_the_dropouts_fp64_and_fp32_flops_apart() -> None:
    launch = read_measured(NCU / "dropout-fp64-launches.csv").kernels.set_index("id").loc["0"]
    assert launch["flops_fp64"] == DROPOUT_FP64_FLOPS == 2_359_296
    assert launch["flops_fp32"] == DROPOUT_FP32_FLOPS == 1_048_576
    assert launch["flops_fp16"] == 0 and launch["matrix_flops"] == 0 and launch["matrix_precision"] is None
    assert launch["flops"] == DROPOUT_FP64_FLOPS + DROPOUT_FP32_FLOPS


def test_the_fp64_dropout_is_held_to_the_fp64_roof_not_the_fp32_one(capsys) -> None:
    kernel = _kernel(_json(capsys, NCU / "dropout-fp64-launches.csv", "--preset", "a100"), "0")
    assert kernel["roof"] == "fp64 vector" and kernel["mixed"]
    assert kernel["held_to"] == "FP64 vector 69 % + FP32 vector 31 %"  # 2,359,296 and 1,048,576 of 3,407,872
    assert [(w["precision"], w["unit"], w["flops"], w["peak_flops_per_s"]) for w in kernel["work"]] == [
        ("fp64", "vector", DROPOUT_FP64_FLOPS, A100_FP64_VECTOR), ("fp32", "vector", DROPOUT_FP32_FLOPS,
                                                                  A100_FP32_VECTOR)]
    # Its compute roof: 3,407,872 FLOPs take at least 2,359,296 / 9.7e12 + 1,048,576 / 19.5e12 s = 297 ns.
    least_s = DROPOUT_FP64_FLOPS / A100_FP64_VECTOR + DROPOUT_FP32_FLOPS / A100_FP32_VECTOR
    assert least_s == pytest.approx(297.0e-9, rel=1e-3)
    assert kernel["peak_flops_per_s"] == pytest.approx(3_407_872 / least_s)  # 11.47 TFLOP/s
    assert A100_FP64_VECTOR < kernel["peak_flops_per_s"] < A100_FP32_VECTOR
    # 0.812 FLOP per byte is far left of either ridge: the memory roof, 2.039e12 × 0.812 = 1.657 TFLOP/s.
    intensity = 3_407_872 / DROPOUT_BYTES
    assert kernel["roof_flops_per_s"] == pytest.approx(A100_BYTES_PER_S * intensity)
    assert kernel["fraction_of_roof"] == pytest.approx(3_407_872 / DROPOUT_S / (A100_BYTES_PER_S * intensity))
    assert kernel["fraction_of_roof"] == pytest.approx(0.1752, abs=1e-4) and not kernel["above_roof"]


def test_a_preset_without_the_fp64_roof_says_so_in_one_line(capsys) -> None:
    """The TPU v4 fixture states no vector rate: no FP32 fallback, a line naming the kernel, precision, preset."""
    record = _json(capsys, NCU / "dropout-fp64-launches.csv", "--preset", "tpu-v4")
    kernel = _kernel(record, "0")
    assert (kernel["roof_flops_per_s"], kernel["fraction_of_roof"], kernel["above_roof"]) == (None, None, False)
    line = next(note for note in record["notes"] if note.startswith("kernel 0 "))
    assert "\n" not in line
    assert re.fullmatch(r"kernel 0 \(void at::native::\(anonymous namespace\)::fused_dropout_kerne…\) did "
                        r"69 % of its FLOPs as FP64 vector work and preset tpu-v4 does not give its FP64 vector "
                        r"rate in .*tpu-v4\.yaml \(its peaks: .*\): it has no roof", line)
    assert main(["measured", str(NCU / "dropout-fp64-launches.csv"), "--presets-dir", str(PRESETS),
                 "--preset", "tpu-v4"]) == 0
    assert "note: kernel 29 (" in capsys.readouterr().out


def test_flash_attention_kernels_keep_their_place_on_the_fp16_tensor_roof(capsys) -> None:
    record = _json(capsys, NCU / "a100-gpt2-flashmha-fp16-launches.csv", "--preset", "a100")
    qkv = _kernel(record, "5")
    # Launch 5: tensor "55,296" (× 4,096), fadd and fmul "294,912"; dram "3,642,496" byte; "12,580.52" cycles at
    # "990,280,110.08" cycle/second. Its name says fp16 and its shape code 16816.
    flops = 55_296 * 4_096 + 2 * 294_912
    assert qkv["roof"] == "fp16 tensor" and qkv["matrix_precision_named"]
    assert qkv["held_to"] == "FP16 tensor 99.7 % + FP32 vector 0.26 %"
    intensity = flops / 3_642_496  # 62.3 FLOP/byte, left of the FP16 ridge (312e12 / 2.039e12 = 153)
    assert qkv["intensity"] == pytest.approx(intensity)
    assert qkv["fraction_of_roof"] == pytest.approx(flops / (12_580.52 / 990_280_110.08)
                                                    / (A100_BYTES_PER_S * intensity))
    assert round(qkv["fraction_of_roof"] * 100, 1) == 14.1
    # Launch 7 (fmha_fwd_loop_kernel<…, __half>): tensor "6,144", fadd "282,624", ffma "110,592", fmul "79,872",
    # dmul "6,144": three precisions, most on the FP16 matrix units; "__half" in its name gives FP16.
    attention = _kernel(record, "7")
    assert attention["roof"] == "fp16 tensor" and attention["matrix_precision_named"]
    assert [(w["precision"], w["unit"], w["flops"]) for w in attention["work"]] == [
        ("fp16", "tensor", 6_144 * 4_096), ("fp32", "vector", 282_624 + 2 * 110_592 + 79_872),
        ("fp64", "vector", 6_144)]
    assert round(attention["fraction_of_roof"] * 100, 1) == 1.6
    assert round(_kernel(record, "8")["fraction_of_roof"] * 100, 1) == 6.9


def test_fp16_work_on_the_vector_units_meets_the_presets_fp16_vector_roof(capsys) -> None:
    """Launch 6 (arange): only hfma "3" (6 FLOPs), dram "128" byte, "2,819.48" cycles at "808,337,580.70"
    cycle/second: FP16 on the vector units, held to the fixture A100's FP16 vector rate (78 TFLOP/s, the
    whitepaper's Table 1); at 6 / 128 FLOP/byte its roof is the memory one."""
    record = _json(capsys, NCU / "a100-gpt2-flashmha-fp16-launches.csv", "--preset", "a100")
    arange = _kernel(record, "6")
    assert (arange["held_to"], arange["roof"], arange["mixed"]) == ("FP16 vector", "fp16 vector", False)
    assert arange["peak_flops_per_s"] == A100_FP16_VECTOR
    seconds = 2_819.48 / 808_337_580.70  # 3.488 µs
    roof = A100_BYTES_PER_S * 6 / 128  # 0.0956 TFLOP/s, far left of the FP16 vector ridge (78 / 2.039 = 38)
    assert arange["roof_flops_per_s"] == pytest.approx(roof)
    assert arange["fraction_of_roof"] == pytest.approx(6 / seconds / roof)
    assert arange["fraction_of_roof"] == pytest.approx(1.80e-5, rel=1e-2) and not arange["above_roof"]
    assert not any("no roof" in note for note in record["notes"])
    # A share that would print as 0.0 % keeps two digits: the kernel did work, a little.
    assert main(["measured", str(NCU / "a100-gpt2-flashmha-fp16-launches.csv"), "--presets-dir", str(PRESETS),
                 "--preset", "a100"]) == 0
    row = next(line for line in capsys.readouterr().out.splitlines() if line.startswith("6 "))
    assert row.split()[-1:] == ["%"] and row.split()[-2] == "0.0018"
    # Its three HFMA ran as one tensor-pipe instruction (HFMA2.MMA): the record says they may be moves.
    assert any(note.startswith("kernel 6 (void <unnamed>::elementwise_kernel_with_index") and
               "HFMA2.MMA" in note and "(100 % of its FLOPs)" in note for note in record["notes"])


def test_a_preset_without_the_fp16_vector_rate_gives_the_no_roof_line(capsys) -> None:
    """The H100 fixture states no FP16 rate off the tensor cores: kernel 6 has no roof, in one line."""
    record = _json(capsys, NCU / "a100-gpt2-flashmha-fp16-launches.csv", "--preset", "h100")
    arange = _kernel(record, "6")
    assert (arange["roof_flops_per_s"], arange["fraction_of_roof"]) == (None, None)
    line = next(note for note in record["notes"] if note.startswith("kernel 6 "))
    assert "\n" not in line
    assert re.fullmatch(r"kernel 6 \(void <unnamed>::elementwise_kernel_with_index<int, at::nati…\) did 100 % of "
                        r"its FLOPs as FP16 vector work and preset h100 does not give its FP16 vector rate in "
                        r".*h100\.yaml \(its peaks: .*\): it has no roof", line)
    assert _kernel(record, "5")["roof_flops_per_s"] is not None  # the others keep their roofs


def test_the_fp32_attentions_split_k_reduction_and_softmax_get_their_roofs_back(capsys) -> None:
    """Launch 7 (split-K reduction): fadd "589,824", fmul "49,152", hfma "196,608"; launch 19 (softmax): fadd
    "196,608", ffma "270,336", fmul "24,576", hfma "12,288". Each is held to FP32 and FP16 vector in turn."""
    record = _json(capsys, NCU / "a100-gpt2-mha-fp32-launches.csv", "--preset", "a100")
    reduce = _kernel(record, "7")
    fp32, fp16 = 589_824 + 49_152, 2 * 196_608
    assert reduce["held_to"] == "FP32 vector 62 % + FP16 vector 38 %"
    assert reduce["peak_flops_per_s"] == pytest.approx((fp32 + fp16) / (fp32 / A100_FP32_VECTOR
                                                                        + fp16 / A100_FP16_VECTOR))
    assert round(reduce["peak_flops_per_s"] / 1e12, 1) == 27.3
    softmax = _kernel(record, "19")
    assert softmax["held_to"] == "FP32 vector 97 % + FP16 vector 3 %" and softmax["roof_flops_per_s"] is not None
    assert not any("no roof" in note for note in record["notes"])
    # Their HFMA are HFMA2.MMA (4 a thread in 49,152 threads; 1 a thread in 12,288): the notes say so.
    moves = [note for note in record["notes"] if "HFMA2.MMA" in note]
    assert [note.split(" ", 2)[1] for note in moves] == ["7", "19"]
    assert "(38 % of its FLOPs)" in moves[0] and "(3 % of its FLOPs)" in moves[1]


@pytest.mark.parametrize(("name", "expected"), [
    ("ampere_fp16_s16816gemm_fp16_64x64_sliced1x2_ldg8_relu_f2f_stages_64x6_tn", ("fp16", 4_096, True)),
    ("void fmha_fwd_loop_kernel<FMHA_kernel_traits<(int)128, (int)64, (int)16, (int)1, (int)4, (unsigned int)8, "
     "__half>, (bool)0, (bool)0, (bool)0>(FMHA_fprop_params)", ("fp16", 4_096, True)),
    ("turing_fp16_s1688gemm_fp16_128x128_ldg8_f2f_tn", ("fp16", 2 * 16 * 8 * 8, True)),
    ("sm80_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x32_stage4", ("bf16", 4_096, True)),
    ("cutlass_tensorop_s1688tf32gemm_256x128_16x3_nn_align4", ("tf32", 2 * 16 * 8 * 8, True)),
    ("void cutlass::Kernel<cutlass_80_tensorop_d884gemm_64x32_16x4_nn_align1>(T1::Params)", ("fp64", 512, True)),
    ("cutlass_80_tensorop_i16832gemm_s8_128x128_64x3_tn_align16", ("int8", 2 * 16 * 8 * 32, True)),
    ("sm90_xmma_gemm_e4m3e4m3_e4m3f32_f32_tn_n_tilesize128x128x64", ("fp8", 2 * 16 * 8 * 32, True)),
    ("my_fused_kernel", ("fp16", 4_096, False)),
])
def test_a_matrix_kernels_precision_and_shape_come_from_its_name(name, expected) -> None:
    assert matrix_precision(name) == expected


# A format sample (not a capture): --page raw, one FP64 kernel on the vector units (DFMA only) timed as if it ran at
# 12.5 TFLOP/s, faster than an A100's 9.7 TFLOP/s FP64 vector roof though well under its FP32 one; one FP64 GEMM on
# the matrix units (cutlass d884gemm: 512 FLOPs an instruction); one kernel 60 % DFMA, 40 % FFMA by FLOPs.
RAW = "\n".join([
    '"ID","Kernel Name","dram__bytes.sum","gpu__time_duration.sum","sm__inst_executed_pipe_tensor.sum",'
    '"sm__sass_thread_inst_executed_op_dfma_pred_on.sum","sm__sass_thread_inst_executed_op_ffma_pred_on.sum"',
    '"","","byte","nsecond","inst","inst","inst"',
    '"0","fp64_vector_kernel","10,000,000","160,000","0","1,000,000,000","0"',
    '"1","cutlass_80_tensorop_d884gemm_64x32_16x4_nn_align1","10,000,000","200,000","4,000,000","0","0"',
    '"2","mixed_kernel","1,000,000","300,000","0","600,000,000","400,000,000"',
])


@pytest.fixture()
def project(tmp_path: Path) -> Path:
    shutil.copytree(PRESETS, tmp_path / "presets")
    (tmp_path / "docs" / "measured").mkdir(parents=True)
    (tmp_path / "docs" / "measured" / "fp64.csv").write_text(RAW + "\n")
    shutil.copy(NCU / "dropout-fp64-launches.csv", tmp_path / "docs" / "measured" / "dropout.csv")
    return tmp_path


def test_an_fp64_kernel_past_the_fp64_roof_is_flagged_though_under_the_fp32_one(project, capsys) -> None:
    record = _json(capsys, project / "docs" / "measured" / "fp64.csv", "--preset", "a100")
    vector, matrix, mixed = record["kernels"]
    assert vector["flops_per_s"] == pytest.approx(2e9 / 160e-6)  # 12.5 TFLOP/s at 200 FLOP/byte
    assert vector["roof"] == "fp64 vector" and vector["roof_flops_per_s"] == pytest.approx(A100_FP64_VECTOR)
    # Held to FP32, as it was, it read 12.5 / 19.5 = 64 % and passed.
    assert vector["above_roof"] and vector["fraction_of_roof"] == pytest.approx(12.5 / 9.7)
    # The d884 GEMM: 4,000,000 × 512 FLOPs in 200 µs = 10.24 TFLOP/s against the FP64 tensor roof, 19.5.
    assert matrix["roof"] == "fp64 tensor" and matrix["flops"] == 4_000_000 * 512
    assert matrix["fraction_of_roof"] == pytest.approx(10.24 / 19.5) and not matrix["above_roof"]
    # 1.2e9 FP64 and 0.8e9 FP32 FLOPs take 1.2e9 / 9.7e12 + 0.8e9 / 19.5e12 s at least: 12.14 TFLOP/s at most.
    assert mixed["held_to"] == "FP64 vector 60 % + FP32 vector 40 %"
    assert mixed["peak_flops_per_s"] == pytest.approx(2e9 / (1.2e9 / A100_FP64_VECTOR + 0.8e9 / A100_FP32_VECTOR))
    assert main(["measured", str(project / "docs" / "measured" / "fp64.csv"), "--presets-dir",
                 str(project / "presets"), "--preset", "a100"]) == 0
    out = capsys.readouterr().out
    assert "3 launches, roofs of a100" in out and "ABOVE ROOF" in out
    assert "kernel 2 mixes precisions: FP64 vector 60 % + FP32 vector 40 % of its FLOPs; compute roof ΣF ÷ " \
           "Σ(F_p ÷ peak_p) = 12.14 TFLOP/s" in out
    assert re.search(r"\n0 +fp64_vector_kernel +FP64 vector ", out)


def _page(site: NotesSite, body: str) -> str:
    return convert_page(site, f"# M\n\n```roofline\n{body}\n```\n", "notes/m.md", "notes/m/")


def _text(html: str) -> str:
    return unescape(re.sub(r"<[^>]+>", " ", html))


def test_the_roofline_draws_the_fp64_roof_and_names_the_precision(project) -> None:
    site = NotesSite(project / "presets")
    html = _page(site, "presets: [a100]\nmeasured: docs/measured/dropout.csv\nid: drop")
    spec = json.loads(site.embed_files(site.charts["drop"])["json"])
    roofs = {row["roof"] for row in spec["datasets"]["roofs"]}
    assert roofs == {"FP64 vector roof"}
    flat = max(row["y"] for row in spec["datasets"]["roofs"])
    assert flat == pytest.approx(A100_FP64_VECTOR)
    points = spec["datasets"]["points"]
    assert [p["label"] for p in points] == ["1: 18 % of mixed roof", "2: 35 % of mixed roof"]
    assert all(p["own_roof"] is None for p in points)  # memory-bound: on the FP64 line's slope
    text = _text(html)
    assert "Held to: 1 FP64 vector 69 % + FP32 vector 31 %; 2 FP64 vector 60 % + FP32 vector 40 %." in text
    assert "is held to ΣF ÷ Σ(F_p ÷ peak_p)" in text
    cells = [unescape(cell).replace("\xa0", " ") for cell in re.findall(r"<td[^>]*>(.*?)</td>", html)]
    assert "FP64 vector 69 % + FP32 vector 31 %" in cells


def test_a_compute_bound_mixed_kernel_gets_a_dash_at_its_own_roof(project) -> None:
    site = NotesSite(project / "presets")
    html = _page(site, "presets: [a100]\nmeasured: docs/measured/fp64.csv\nid: f")
    points = json.loads(site.embed_files(site.charts["f"])["json"])["datasets"]["points"]
    assert [p["roof"] for p in points] == ["FP64 vector roof", "FP64 tensor roof", "FP64 vector roof"]
    assert points[0]["own_roof"] is None and points[1]["own_roof"] is None
    assert points[2]["own_roof"] == pytest.approx(2e9 / (1.2e9 / A100_FP64_VECTOR + 0.8e9 / A100_FP32_VECTOR))
    assert "(a dash marks it where that colour's line does not pass)" in _text(html)


def test_a_phones_labels_shorten_only_where_the_whole_one_fits_on_neither_side(project) -> None:
    """On a 300 px chart a label at mid-axis has about 125 px either side; the desk's chart keeps every word."""
    site = NotesSite(project / "presets")
    _page(site, "presets: [a100]\nmeasured: docs/measured/fp64.csv\nid: f")
    points = json.loads(site.embed_files(site.charts["f"])["json"])["datasets"]["points"]
    assert [p["label"] for p in points] == ["1: above its FP64 vector roof (129 %)", "2: 53 % of FP64 tensor roof",
                                            "3: 55 % of mixed roof"]
    assert [p["narrow_label"] for p in points] == ["1: above roof (129 %)", "2: 53 %", "3: 55 % of mixed roof"]


def test_the_fp16_vector_point_is_drawn_on_its_own_roof_with_its_label_clear_of_the_axis(capsys) -> None:
    """On the chart, launch 6 is point 2, coloured and named by the FP16 vector roof; it sits in the lowest
    decade, so its label goes above it rather than into the x axis's numbers."""
    from ainotes.charts.measured_roofline import chart_rows
    from ainotes.core.hardware import preset_by_id
    from ainotes.presets.gpus import load_presets

    record = _json(capsys, NCU / "a100-gpt2-flashmha-fp16-launches.csv", "--preset", "a100")
    rows = chart_rows(record, preset_by_id(load_presets(PRESETS), "a100"))
    assert rows["roof_names"] == ["FP16 tensor roof", "FP16 vector roof"]
    point = next(p for p in rows["points"] if p["n"] == 2)
    assert (point["roof"], point["label"]) == ("FP16 vector roof", "2: 0.0018 % of FP16 vector roof")
    assert rows["y_domain"][0] <= point["y"] < 10 * rows["y_domain"][0] and point["up"]
