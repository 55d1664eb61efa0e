"""An author adds two presets (an NVIDIA H200 SXM, an AMD Instinct MI325X, from the vendors' data
sheets) beside the shipped ones: every check that depends on presets holds for the new folder, and
the new parts show up wherever a preset should, with the figures their data sheets print."""

from __future__ import annotations

import json
import re
from html import unescape
from pathlib import Path

import jsonschema
import pytest
import yaml

from ainotes.build.site import NotesSite
from ainotes.charts.roofline.spec import roofline_spec
from ainotes.cli import main
from ainotes.core import roofline
from ainotes.core.hardware import UNIT_PRECISIONS
from ainotes.core.kernels import parse_kernel_spec
from ainotes.html import tables
from ainotes.inline import figures
from ainotes.markdown.extension import convert_page
from ainotes.presets.gpus import load_presets, preset_schema, validate_paths
from preset_support import ADDED, MI300X, presets_with_additions, shipped_ids
from sitebuild import make_fixture, run_build

KERNELS = ("gemm:8192x8192x8192:bf16", "gemm:8192x8192x8192:fp8", "gemm:8192x8192x8192:fp32",
           "add:16777216:bf16", "gemm:4096x4096x4096:int8", "gemm:8192x8192x8192:fp8:sparse")


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return presets_with_additions(tmp_path_factory.mktemp("added") / "presets")


def run(capsys: pytest.CaptureFixture[str], folder: Path, *argv: str) -> tuple[int, str, str]:
    status = main(["--presets-dir", str(folder), *argv])
    captured = capsys.readouterr()
    return status, captured.out, captured.err


def text_of(html_text: str) -> str:
    return " ".join(unescape(re.sub(r"<[^>]+>", " ", html_text)).replace("\u200b", "").split())


def test_the_folder_loads_ordered_by_dense_rate_with_the_data_sheet_figures(folder: Path) -> None:
    presets = load_presets(folder)
    assert sorted(p.id for p in presets) == sorted({*shipped_ids(), *ADDED})
    assert [p.id for p in presets if p.warnings] == []  # no plausibility rule questions a real part
    dense = [p.dense_fp16_tflops for p in presets]
    assert dense == sorted(dense, reverse=True)
    by_id = {p.id: p for p in presets}
    h200, mi325x = by_id["h200"], by_id["mi325x"]
    # H200 SXM: 989.4 TFLOP/s dense BF16 (1,979 with sparsity), 4.8 TB/s, 141 GB.
    assert (h200.dense_fp16_tflops, h200.memory_bandwidth_tbps, h200.memory_capacity_gb) == (989.4, 4.8, 141)
    assert h200.ridge_flop_per_byte() == pytest.approx(206.125)
    # MI325X: 1,307.4 TFLOP/s dense FP16/BF16, 6 TB/s, 256 GB; FP8 2,614.9 dense, 5,229.8 sparse.
    assert (mi325x.dense_fp16_tflops, mi325x.memory_bandwidth_tbps, mi325x.memory_capacity_gb) == (1307.4, 6, 256)
    assert mi325x.peak_tflops("fp8") == 2614.9 and mi325x.peak_tflops("fp8", sparsity=True) == 5229.8
    assert mi325x.ridge_flop_per_byte() == pytest.approx(1307.4 / 6)
    assert mi325x.unit_term("tensor") == "Matrix Cores" and mi325x.unit_term("vector") == "stream processors"


def test_every_file_validates_and_satisfies_the_schema(folder: Path) -> None:
    checks = validate_paths([folder])
    assert [c.error for c in checks if not c.ok] == []
    assert sorted(c.preset.id for c in checks if c.preset) == sorted({*shipped_ids(), *ADDED})
    schema = preset_schema()
    for path in sorted(folder.glob("*.yaml")):
        jsonschema.validate(yaml.safe_load(path.read_text(encoding="utf-8")), schema)


def test_every_stated_figure_is_consistent(folder: Path) -> None:
    for preset in load_presets(folder):
        for path in preset.peaks:
            if path.dense_tflops is None:
                continue
            assert path.source in preset.sources, (preset.id, path.label)
            if path.printed_sparse_tflops is not None:
                assert path.printed_sparse_tflops == pytest.approx(2 * path.dense_tflops, rel=1e-3)
            assert path.peak_tflops(sparsity=True) == pytest.approx(path.dense_tflops * (2 if path.sparse_supported
                                                                                         else 1))


def test_cli_validate_and_presets_list_the_new_parts(capsys: pytest.CaptureFixture[str], folder: Path) -> None:
    status, out, err = run(capsys, folder, "validate")
    assert (status, err) == (0, "")
    assert f"OK {folder / 'mi325x.yaml'}: mi325x (AMD Instinct MI325X (256 GB HBM3E))" in out
    status, out, err = run(capsys, folder, "presets")
    assert (status, err) == (0, "")
    rows = {line.split()[0]: line.split() for line in out.split("\n\n")[0].splitlines()[2:]}
    assert set(rows) == {*shipped_ids(), *ADDED}
    assert rows["h200"][-5:] == ["989.4", "1978.8", "4.8", "206.1", "412.3"]
    assert rows["mi325x"][-5:] == ["1307.4", "2614.8", "6", "217.9", "435.8"]
    status, out, _ = run(capsys, folder, "presets", "--json")
    records = {p["id"]: p for p in json.loads(out)["presets"]}
    assert records["mi325x"]["peaks"]["tensor"]["fp8"] == 2614.9
    assert records["mi325x"]["peaks"]["tensor"]["fp4"] == "not given"
    assert records["h200"]["peaks"]["tensor"]["fp4"] is None  # no FP4 path on Hopper
    assert records["mi325x"]["peaks"]["vector"] == {"fp64": 81.7, "fp32": 163.4}


def test_cli_kernel_places_each_kernel_on_every_preset(capsys: pytest.CaptureFixture[str], folder: Path) -> None:
    presets = {p.id: p for p in load_presets(folder)}
    for spec in KERNELS:
        status, out, err = run(capsys, folder, "kernel", spec, "--json")
        assert (status, err) == (0, ""), spec
        records = {r["id"]: r for r in json.loads(out)["presets"]}
        assert set(records) == set(presets)
        for preset_id, record in records.items():
            core = roofline.kernel_roof(presets[preset_id], parse_kernel_spec(spec))
            assert record["bound"] == core.bound, (spec, preset_id)
            if core.attainable_flops_per_s is not None:
                assert record["attainable_tflops"] == pytest.approx(core.attainable_flops_per_s / 1e12)
    status, out, _ = run(capsys, folder, "kernel", "gemm:8192x8192x8192:fp8", "--preset", "mi325x", "--json")
    (record,) = json.loads(out)["presets"]
    assert (record["peak_tflops"], record["bound"]) == (2614.9, "compute")


def test_tables_and_inline_forms_show_the_new_parts(folder: Path) -> None:
    presets = load_presets(folder)
    by_id = {p.id: p for p in presets}
    table = text_of(tables.presets_table_html(presets))
    for preset in presets:
        assert preset.name in table
    assert "6 TB/s" in table and "4.8 TB/s" in table
    assert "Matrix Cores and stream processors" in table and "256 GB" in table and "141 GB" in table
    precision = text_of(tables.precision_table_html(presets))
    assert "AMD Instinct MI325X (256 GB HBM3E) [1] 163.4 163.4 653.7 2:4 ×2 1,307.4 2:4 ×2 2,614.9 2:4 ×2" \
        in precision  # FP64 and FP32 matrix, TF32, FP16/BF16, FP8, dense, with AMD's 2:4 figures doubling them
    kernels = text_of(tables.kernels_table_html([parse_kernel_spec(s) for s in KERNELS], presets))
    assert "compute roof 2.615 PFLOP/s" in kernels
    ridges = figures.evaluate("ridges", by_id)
    assert "AMD Instinct MI325X (256 GB HBM3E) at 218 FLOP/byte" in ridges
    assert "NVIDIA H200 SXM 141 GB at 206 FLOP/byte" in ridges
    assert figures.evaluate("peak mi325x fp8 sparse", by_id) == "5.23 PFLOP/s"


def test_the_roofline_chart_draws_every_roof_of_every_preset(folder: Path) -> None:
    presets = load_presets(folder)
    kernels = [parse_kernel_spec(s) for s in KERNELS]
    spec = roofline_spec(presets, kernels=kernels)
    ceilings = {(row["r"], row["p"]): row for row in spec["datasets"]["ceilings"]}
    # Each kernel's mark at its own dtype (the explorer also carries it re-typed to every precision shown).
    marks = {(row["k"], row["p"]): row for row in spec["datasets"]["kernels"] if " own " in row["m"]}
    for preset in presets:
        # Every roof of UNIT_PRECISIONS; the optional matrix FP32 rate, which no kernel meets, is in the
        # tables but not (yet) among the chart's roofs (charts/roofline.py ROOF_ORDER).
        for unit, precision, path in preset.all_paths():
            if precision not in UNIT_PRECISIONS[unit]:
                continue
            row = ceilings.get((f"{unit}:{precision}", preset.id))
            if path is None or path.dense_tflops is None:
                assert row is None
            else:
                assert row is not None and row["peak"] == pytest.approx(path.dense_tflops * 1e12)
        for number, kernel in enumerate(kernels, start=1):
            core = roofline.kernel_roof(preset, kernel)
            if core.attainable_flops_per_s is None:
                assert (number, preset.id) not in marks
            else:
                assert marks[(number, preset.id)]["y"] == core.attainable_flops_per_s


def test_pages_built_from_the_folder_show_the_new_parts(folder: Path) -> None:
    site = NotesSite(folder)
    page = ("# GPUs\n\n{{ ridge mi325x }} and {{ ridges fp8 }}.\n\n```presets-table\n```\n\n"
            "```kernels-table\nkernels: [gemm:8192x8192x8192:fp8]\n```\n\n```roofline\nid: all\n```\n")
    out = convert_page(site, page, "gpus.md", "gpus/")
    text = text_of(out)
    assert text.startswith("GPUs 218 FLOP/byte and ")
    assert "AMD Instinct MI325X (256 GB HBM3E) at 436 FLOP/byte" in text  # 2,614.9 / 6
    assert "NVIDIA H200 SXM 141 GB" in text and "Matrix Cores and stream processors" in text
    assert site.charts["all"].about["presets"] == [p.id for p in load_presets(folder)]  # every preset, in order


@pytest.mark.build
def test_a_site_built_with_the_folder_names_the_new_parts(tmp_path: Path, folder: Path) -> None:
    page = ("# Home\n\nRidges: {{ ridges }}.\n\n```presets-table\n```\n\n```roofline\nid: gpus\n"
            "kernels: [gemm:8192x8192x8192:fp8]\n```\n")
    project = make_fixture(tmp_path / "project", {"index.md": page},
                           {p.stem: p.read_text(encoding="utf-8") for p in folder.glob("*.yaml")})
    build = run_build(project)
    assert build.returncode == 0, build.output
    home = text_of(build.page(""))
    assert "AMD Instinct MI325X (256 GB HBM3E) at 218 FLOP/byte" in home
    assert "NVIDIA H200 SXM 141 GB at 206 FLOP/byte" in home
    manifest = json.loads((build.site / "embed" / "manifest.json").read_text(encoding="utf-8"))
    (gpus,) = [c for c in manifest["charts"] if c["id"] == "gpus"]
    assert set(ADDED) <= set(gpus["presets"])
    spec = (build.site / "embed" / gpus["files"]["json"]).read_text(encoding="utf-8")
    assert "AMD Instinct MI325X (256 GB HBM3E)" in spec and "NVIDIA H200 SXM 141 GB" in spec


@pytest.mark.build
def test_a_slip_stops_the_strict_build_and_a_confirmed_figure_does_not(tmp_path: Path) -> None:
    page = {"index.md": "# Home\n\nFP8 ridge {{ ridge mi300x fp8 }}.\n"}
    slip = MI300X.replace("memory_bandwidth_tbps: 5.3", "memory_bandwidth_tbps: 5300")
    build = run_build(make_fixture(tmp_path / "slip", page, {"mi300x": slip}))
    assert build.returncode != 0
    errors = [line for line in build.output.splitlines() if line.startswith("ERROR")]
    assert errors == [f"ERROR   -  {tmp_path / 'slip' / 'presets' / 'mi300x.yaml'}:4: 'memory_bandwidth_tbps' 5300 is "
                      "outside 0.05-100 TB/s per chip, where every accelerator's memory lies: GB/s typed as TB/s? "
                      "(5300 GB/s = 5.3 TB/s)"]
    confirmed = MI300X.replace("    fp8: {dense_tflops: 2614.9, sparse_tflops: 5229.8, source: 1}\n",
                               "    fp8: {dense_tflops: 5229.8, confirmed_dense: true}\n")
    build = run_build(make_fixture(tmp_path / "confirmed", page, {"mi300x": confirmed}))
    assert build.returncode == 0, build.output
    assert "'peaks.tensor.fp8' 5229.8 is twice what its neighbours predict" in build.output  # said, not fatal
    assert "FP8 ridge 987 FLOP/byte" in text_of(build.page(""))  # 5,229.8 / 5.3


def test_a_matrix_fp32_rate_is_listed_where_the_vendor_prints_one(
    capsys: pytest.CaptureFixture[str], folder: Path
) -> None:
    by_id = {p.id: p for p in load_presets(folder)}
    mi325x, h200 = by_id["mi325x"], by_id["h200"]
    # AMD's data sheet: FP32 matrix 163.4 TFLOP/s, FP32 vector 163.4 TFLOP/s.
    assert mi325x.peak_tflops("fp32", unit="tensor") == 163.4 and mi325x.status("fp32", "tensor") == "given"
    assert ("tensor", "fp32") in [(u, p) for u, p, _ in mi325x.all_paths()]
    assert h200.status("fp32", "tensor") == "not given"  # NVIDIA's FP32 matrix work is TF32
    assert ("tensor", "fp32") not in [(u, p) for u, p, _ in h200.all_paths()]
    assert figures.evaluate("peak mi325x fp32 tensor", by_id) == "163.4 TFLOP/s"
    # An fp32 GEMM meets the vector FP32 rate on every part, the one that states a matrix rate too.
    gemm = parse_kernel_spec("gemm:8192x8192x8192:fp32")
    for preset in (mi325x, h200):
        roof = roofline.kernel_roof(preset, gemm)
        assert (roof.unit, roof.precision) == ("vector", "fp32")
        assert roof.peak_flops_per_s == pytest.approx(preset.peak_tflops("fp32", unit="vector") * 1e12)
    status, out, _ = run(capsys, folder, "presets", "--json")
    assert status == 0
    records = {p["id"]: p for p in json.loads(out)["presets"]}
    assert records["mi325x"]["peaks"]["tensor"]["fp32"] == 163.4
    assert "fp32" not in records["h200"]["peaks"]["tensor"]  # not even "not given": optional
    assert [(d["unit"], d["precision"]) for d in records["mi325x"]["precisions"]][:2] == [("tensor", "fp64"),
                                                                                        ("tensor", "fp32")]


def test_presets_json_gives_capacity_and_the_vendors_unit_names(
    capsys: pytest.CaptureFixture[str], folder: Path
) -> None:
    status, out, _ = run(capsys, folder, "presets", "--json")
    assert status == 0
    records = {p["id"]: p for p in json.loads(out)["presets"]}
    assert records["mi325x"]["memory_capacity_gb"] == 256
    assert records["mi325x"]["unit_names"] == {"tensor": "Matrix Cores", "vector": "stream processors"}
    assert records["h200"]["memory_capacity_gb"] == 141
    assert records["h200"]["unit_names"] == {"tensor": "tensor cores", "vector": "CUDA cores"}
    for preset in load_presets(folder):
        record = records[preset.id]
        assert record["memory_capacity_gb"] == preset.memory_capacity_gb
        assert record["unit_names"] == {"tensor": preset.unit_term("tensor"), "vector": preset.unit_term("vector")}


def test_a_file_without_unit_names_or_capacity_gets_the_neutral_words(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    (tmp_path / "plain.yaml").write_text("name: Plain\ndense_fp16_tflops: 100\nmemory_bandwidth_tbps: 2\n"
                                         "sources:\n  - {title: T, url: 'https://example.com/'}\n", encoding="utf-8")
    status, out, _ = run(capsys, tmp_path, "presets", "--json")
    assert status == 0
    (record,) = json.loads(out)["presets"]
    assert record["memory_capacity_gb"] is None
    assert record["unit_names"] == {"tensor": "matrix units", "vector": "vector units"}
