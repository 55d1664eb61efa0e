"""`ainotes kernel`, `ainotes presets` per precision, `ainotes roofline --precision`: FACTS figures via the CLI."""

from __future__ import annotations

import inspect
import json
import subprocess
import sys
from pathlib import Path

import pytest

from ainotes.charts.roofline.spec import roofline_spec
from ainotes.cli import main
from preset_support import FIXTURE_IDS, FIXTURE_PRESETS, UNKNOWN_ID
from test_precision import FACT_CASES

PRESETS_DIR = FIXTURE_PRESETS  # FACTS.md's figures, whatever ships in presets/
AINOTES = Path(sys.executable).with_name("ainotes")
SOURCES = "sources:\n  - title: Vendor table\n    url: https://example.com/spec\n"
ORIGINAL = "name: Old GPU\ndense_fp16_tflops: 100\nmemory_bandwidth_tbps: 2\nstructured_sparsity: true\n" + SOURCES


def run(capsys: pytest.CaptureFixture[str], *argv: str, presets_dir: Path = PRESETS_DIR) -> tuple[int, str, str]:
    status = main(["--presets-dir", str(presets_dir), *argv])
    captured = capsys.readouterr()
    return status, captured.out, captured.err


def one_line_error(status: int, err: str, command: str) -> str:
    assert status == 2
    lines = err.splitlines()
    assert len(lines) == 1 and "Traceback" not in err, err
    assert lines[0].startswith(f"ainotes {command}: ")
    return lines[0]


@pytest.fixture(scope="module")
def presets_json() -> dict[str, dict]:
    result = subprocess.run([str(AINOTES), "--presets-dir", str(PRESETS_DIR), "presets", "--json"],
                            capture_output=True, text=True, check=True)
    return {p["id"]: p for p in json.loads(result.stdout)["presets"]}


@pytest.mark.parametrize(("preset_id", "unit", "precision", "dense"), FACT_CASES,
                         ids=[f"{p}-{u}-{q}" for p, u, q, _ in FACT_CASES])
def test_presets_json_lists_every_facts_figure(
    presets_json: dict[str, dict], preset_id: str, unit: str, precision: str, dense: float | None
) -> None:
    record = presets_json[preset_id]
    assert record["peaks"][unit][precision] == (pytest.approx(dense, rel=1e-12) if dense is not None else None)
    detail = next(d for d in record["precisions"] if (d["unit"], d["precision"]) == (unit, precision))
    assert detail["status"] == ("given" if dense is not None else "no path")
    if dense is not None:
        assert detail["source"]["url"].startswith("https://")
        doubles = unit == "tensor" and precision != "fp64"
        assert detail["sparse_tflops"] == (pytest.approx(2 * dense) if doubles else None)


def test_presets_json_ridges_per_precision(presets_json: dict[str, dict]) -> None:
    def ridge(preset_id: str, precision: str) -> float:
        return next(d["ridge_flop_per_byte"] for d in presets_json[preset_id]["precisions"]
                    if (d["unit"], d["precision"]) == ("tensor", precision))

    assert ridge("b200", "fp16") == pytest.approx(281.25)
    assert ridge("h100", "fp16") == pytest.approx(295.34, abs=0.01)
    assert ridge("b200", "fp8") == pytest.approx(562.5)
    assert ridge("b200", "fp4") == pytest.approx(1125)
    assert presets_json["b200"]["precisions"][0]["derivation"] == (
        "NVIDIA HGX B200 totals ÷ 8 GPUs: 296 TFLOP/s → 37 TFLOP/s")


def test_presets_json_says_not_given_apart_from_no_path(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    (tmp_path / "old.yaml").write_text(ORIGINAL + "peaks:\n  tensor:\n    fp8: none\n", encoding="utf-8")
    status, out, _ = run(capsys, "presets", "--json", presets_dir=tmp_path)
    assert status == 0
    record = json.loads(out)["presets"][0]
    assert record["peaks"]["tensor"] == {"fp64": "not given", "tf32": "not given", "fp16": 100.0, "bf16": 100.0,
                                         "fp8": None, "fp4": "not given", "int8": "not given"}
    assert record["peaks"]["vector"] == {"fp32": "not given", "fp64": "not given"}
    assert record["dense_fp16_tflops"] == 100.0 and record["dense_ridge_flop_per_byte"] == 50.0


def test_presets_table_has_a_row_per_preset_and_a_column_per_precision(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = run(capsys, "presets")
    assert status == 0
    table = out.split("dense peak per precision")[1]
    rows = {line.split()[0]: line.split()[1:] for line in table.splitlines()[3:] if line.strip()
            and not line.startswith(("per-GPU", " "))}
    header = [" ".join(pair) for pair in zip(*[iter(table.splitlines()[1].split()[1:])] * 2, strict=True)]
    assert header == ["matrix FP64", "matrix TF32", "matrix FP16", "matrix BF16", "matrix FP8", "matrix FP4",
                      "matrix INT8", "vector FP64", "vector FP32"]
    assert rows["h100"] == ["66.9", "494.7", "989.4", "989.4", "1978.9", "no", "path", "1978.9", "33.5", "66.9"]
    assert rows["b200"] == ["37", "1125", "2250", "2250", "4500", "9000", "4500", "37", "75"]


def test_done_means_fp8_gemm_on_h100_and_a100() -> None:
    result = subprocess.run(
        [str(AINOTES), "--presets-dir", str(PRESETS_DIR), "kernel", "gemm:8192x8192x8192:fp8",
         "--preset", "h100", "--preset", "a100", "--json"],
        capture_output=True, text=True, check=True,
    )
    data = json.loads(result.stdout)
    assert {k: data[k] for k in ("spec", "kind", "dtype")} == {"spec": "gemm:8192x8192x8192:fp8", "kind": "gemm",
                                                             "dtype": "fp8"}
    assert data["flops"] == 2 * 8192**3 and data["bytes"] == 3 * 8192**2
    assert data["intensity_flop_per_byte"] == pytest.approx(8192 * 2 / 3)
    h100, a100 = data["presets"]
    assert {k: h100[k] for k in ("id", "unit", "precision", "peak_tflops", "attainable_tflops", "bound")} == {
        "id": "h100", "unit": "tensor", "precision": "fp8", "peak_tflops": 1978.9, "attainable_tflops": 1978.9,
        "bound": "compute"}
    assert {k: a100[k] for k in ("id", "unit", "precision", "peak_tflops", "attainable_tflops", "bound")} == {
        "id": "a100", "unit": "tensor", "precision": "fp8", "peak_tflops": None, "attainable_tflops": None,
        "bound": "unsupported"}


# A kernel that meets each FACTS ceiling: matrix kernels at tensor precisions, fp32 GEMMs on the CUDA
# cores, and an fp64 add on the FP64 vector units.
CEILING_KERNELS = {("vector", "fp32"): "gemm:8192x8192x8192:fp32", ("vector", "fp64"): "add:1048576:fp64"}


@pytest.mark.parametrize(("preset_id", "unit", "precision", "dense"), FACT_CASES,
                         ids=[f"{p}-{u}-{q}" for p, u, q, _ in FACT_CASES])
def test_ainotes_kernel_meets_every_facts_ceiling(
    capsys: pytest.CaptureFixture[str], preset_id: str, unit: str, precision: str, dense: float | None
) -> None:
    spec = CEILING_KERNELS.get((unit, precision), f"gemm:8192x8192x8192:{precision}")
    status, out, _ = run(capsys, "kernel", spec, "--preset", preset_id, "--json")
    assert status == 0
    (record,) = json.loads(out)["presets"]
    assert (record["unit"], record["precision"]) == (unit, precision)
    if dense is None:
        assert (record["bound"], record["peak_tflops"], record["attainable_tflops"]) == ("unsupported", None, None)
    else:
        assert record["peak_tflops"] == pytest.approx(dense, rel=1e-12)
        assert record["attainable_tflops"] <= record["peak_tflops"]


@pytest.mark.parametrize(
    ("spec", "preset_id", "unit", "precision", "peak", "bound"),
    [
        ("gemm:8192x8192x8192:fp32", "h100", "vector", "fp32", 66.9, "compute"),
        ("gemm:8192x8192x8192:tf32", "h100", "tensor", "tf32", 494.7, "compute"),
        ("gemm:8192x8192x8192:fp4", "b200", "tensor", "fp4", 9000, "compute"),
        ("gemm:8192x8192x8192:fp4", "h100", "tensor", "fp4", None, "unsupported"),
        ("gemm:8192x8192x8192:fp64", "rtx-4090", "tensor", "fp64", None, "unsupported"),
        ("gemm:8192x8192x8192:fp64", "a100", "tensor", "fp64", 19.5, "compute"),
        ("gemm:8192x8192x8192:int8", "a100", "tensor", "int8", 624, "compute"),
        ("softmax:4096x4096:bf16", "b200", "vector", "fp32", 75, "memory"),
        ("layernorm:4096x4096:fp8", "rtx-4090", "vector", "fp32", 82.6, "memory"),
        ("add:1048576:fp64", "rtx-4090", "vector", "fp64", 1.3, "memory"),
    ],
)
def test_kernel_meets_the_roof_of_its_dtype(
    capsys: pytest.CaptureFixture[str], spec: str, preset_id: str, unit: str, precision: str,
    peak: float | None, bound: str,
) -> None:
    status, out, _ = run(capsys, "kernel", spec, "--preset", preset_id, "--json")
    assert status == 0
    (record,) = json.loads(out)["presets"]
    got = (record["unit"], record["precision"], record["peak_tflops"], record["bound"])
    assert got == (unit, precision, peak, bound)


def test_kernel_without_preset_lists_every_preset(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = run(capsys, "kernel", "gemm:4096x4096x4096", "--json")
    assert status == 0
    assert [p["id"] for p in json.loads(out)["presets"]] == list(FIXTURE_IDS)


def test_sparsity_flag_shows_the_sparse_roof_without_moving_a_dense_kernel(capsys: pytest.CaptureFixture[str]) -> None:
    _, dense_out, _ = run(capsys, "kernel", "gemm:8192x8192x8192:fp8", "--preset", "h100", "--json")
    _, toggled_out, _ = run(capsys, "kernel", "gemm:8192x8192x8192:fp8", "--preset", "h100", "--sparsity", "--json")
    (dense,), (toggled,) = json.loads(dense_out)["presets"], json.loads(toggled_out)["presets"]
    assert toggled.pop("sparse_roof_tflops") == pytest.approx(3957.8)
    assert toggled == dense  # the dense kernel still meets the dense roof
    _, sparse_out, _ = run(capsys, "kernel", "gemm:8192x8192x8192:fp8:sparse", "--preset", "h100", "--json")
    sparse = json.loads(sparse_out)
    assert sparse["sparse"] is True and sparse["bytes"] == 8192**2 * 2.5
    assert (sparse["presets"][0]["sparse"], sparse["presets"][0]["peak_tflops"]) == (True, pytest.approx(3957.8))


def test_kernel_table(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = run(capsys, "kernel", "gemm:8192x8192x8192:fp8", "--preset", "a100", "h100")
    assert status == 0
    rows = {line.split()[0]: line for line in out.splitlines()[4:]}
    assert rows["a100"].split()[1:] == ["FP8", "tensor", "-", "-", "-", "unsupported", "(no", "FP8", "path)"]
    assert rows["h100"].split()[1:] == ["FP8", "tensor", "1978.9", "1978.9", "590.7", "compute"]


@pytest.mark.parametrize(
    ("argv", "fragment"),
    [
        (["kernel", "gemm:8x8"], "ainotes kernel: SPEC: kernel spec 'gemm:8x8': gemm takes 3 dimensions"),
        (["kernel", "gemm:8x8x8:fp6"], "unknown dtype 'fp6'"),
        (["kernel", "add:8:sparse"], "only gemm kernels can be 2:4 sparse"),
        (["kernel", "gemm:8x8x8", "--preset", UNKNOWN_ID], f"ainotes kernel: --preset: unknown preset '{UNKNOWN_ID}'"),
        (["roofline", "--precision", "fp6", "-o", "x.svg"], "argument --precision: invalid choice: 'fp6'"),
    ],
)
def test_bad_input_is_one_line_with_exit_status_2(capsys: pytest.CaptureFixture[str], argv: list[str],
                                                  fragment: str) -> None:
    status, _, err = run(capsys, *argv)
    assert status == 2 and len(err.splitlines()) == 1 and fragment in err and "Traceback" not in err


def test_a_sparse_figure_typed_as_dense_stops_every_command(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    text = ORIGINAL + "peaks:\n  tensor:\n    fp8: {dense_tflops: 400, sparse_tflops: 400}\n"
    (tmp_path / "typo.yaml").write_text(text, encoding="utf-8")
    for argv in (["presets"], ["kernel", "gemm:8x8x8:fp8"], ["validate", str(tmp_path)]):
        status, _, err = run(capsys, *argv, presets_dir=tmp_path)
        line = one_line_error(status, err, argv[0])
        assert f"{tmp_path / 'typo.yaml'}:" in line and "'peaks.tensor.fp8.sparse_tflops' must be 2 × " in line
        assert "sparse 400, dense 400" in line


def test_roofline_precision_reaches_the_chart(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    target = tmp_path / "r.json"
    status, _, err = run(capsys, "roofline", "--precision", "fp8", "-o", str(target))
    if "precision" in inspect.signature(roofline_spec).parameters:
        assert (status, err) == (0, "")
        assert "FP8" in target.read_text(encoding="utf-8")
    else:  # the per-precision chart has not landed: one clear line, nothing written
        assert one_line_error(status, err, "roofline") == (
            "ainotes roofline: --precision: this build's roofline chart draws FP16/BF16 only")
        assert not target.exists()


MEASURED_PRESETS = Path(__file__).parent / "fixtures" / "measured" / "presets"


def test_presets_show_the_optional_fp16_and_bf16_vector_rates(capsys: pytest.CaptureFixture[str]) -> None:
    """The measured fixtures' A100 states the whitepaper's FP16 and BF16 rates off the tensor cores (78 and 39
    TFLOP/s); their H100 does not: a column each, 'not given' where the file is silent."""
    status, out, _ = run(capsys, "presets", presets_dir=MEASURED_PRESETS)
    assert status == 0
    table = out.split("dense peak per precision")[1].splitlines()
    assert table[1].split()[-4:] == ["vector", "FP16", "vector", "BF16"]
    rows = {line.split()[0]: line.split() for line in table[3:] if line.strip()}
    assert rows["a100"][-2:] == ["78", "39"]
    assert rows["h100"][-4:] == ["not", "given", "not", "given"]
    status, out, _ = run(capsys, "presets", "--json", presets_dir=MEASURED_PRESETS)
    peaks = {p["id"]: p["peaks"]["vector"] for p in json.loads(out)["presets"]}
    assert peaks["a100"] == {"fp64": 9.7, "fp32": 19.5, "fp16": 78.0, "bf16": 39.0}
    assert peaks["h100"] == {"fp64": 33.5, "fp32": 66.9}  # an optional rate a file is silent on is not listed


def test_validate_takes_a_vector_fp16_rate_and_names_the_vector_precisions(
        capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    (tmp_path / "ok.yaml").write_text(ORIGINAL + "peaks:\n  vector:\n    fp16: 78\n    bf16: 39\n", encoding="utf-8")
    status, out, _ = run(capsys, "validate", str(tmp_path / "ok.yaml"), presets_dir=tmp_path)
    assert status == 0 and out.startswith(f"OK {tmp_path / 'ok.yaml'}")
    (tmp_path / "bad.yaml").write_text(ORIGINAL + "peaks:\n  vector:\n    fp8: 78\n", encoding="utf-8")
    line = one_line_error(*run(capsys, "validate", str(tmp_path / "bad.yaml"), presets_dir=tmp_path)[::2], "validate")
    assert "unknown precision 'peaks.vector.fp8' (tensor units have it: write it under peaks.tensor)" in line
    assert line.endswith("vector precisions: fp64, fp32, fp16, bf16")
    sparse = "peaks:\n  vector:\n    fp16: {dense_tflops: 78, sparse_tflops: 156}\n"
    (tmp_path / "bad.yaml").write_text(ORIGINAL + sparse, encoding="utf-8")
    line = one_line_error(*run(capsys, "validate", str(tmp_path / "bad.yaml"), presets_dir=tmp_path)[::2], "validate")
    assert "'peaks.vector.fp16': vector (CUDA-core) rates have no 2:4 sparse path" in line
