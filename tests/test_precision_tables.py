"""Tables per precision: the ceiling each kernel meets per preset, every precision's peak with its source."""

from __future__ import annotations

import re
import tempfile
from html import unescape
from pathlib import Path

import pytest

from ainotes.base.errors import InputError
from ainotes.core.jobs import TrainingJob
from ainotes.core.kernels import parse_kernel_spec
from ainotes.html import tables
from ainotes.presets.gpus import load_preset, load_presets
from preset_support import FIXTURE_PRESETS, MI300X

PRESETS_DIR = FIXTURE_PRESETS  # the published NVIDIA figures, whatever ships in presets/
PRESETS = load_presets(PRESETS_DIR)
BY_ID = {p.id: p for p in PRESETS}


def cells(html: str, table: int = 0) -> list[list[str]]:
    """Rows of the ``table``-th table's body as plain text cells."""
    body = html.split("<tbody")[table + 1].split("</tbody>", maxsplit=1)[0].split(">", 1)[1]
    return [[" ".join(unescape(re.sub(r"<[^>]+>", " ", c)).replace("\u200b", "").split())
             for c in re.findall(r"<t[hd][^>]*>(.*?)</t[hd]>", row)] for row in body.split("</tr>") if row]


def heads(html: str, table: int = 0) -> list[str]:
    """The last header row of the ``table``-th table, as plain text."""
    head = html.split("<thead")[table + 1].split("</thead>", maxsplit=1)[0]
    last = head.split("</tr>")[-2]
    return [" ".join(unescape(re.sub(r"<[^>]+>", " ", c)).replace("\u200b", "").split())
            for c in re.findall(r"<th[^>]*>(.*?)</th>", last)]


KERNELS = ("gemm:4096x4096x4096:fp8", "gemm:8192x8192x8192:fp32", "softmax:8192x8192:bf16", "gemm:4096x4096x4096:fp4")


def test_kernels_table_names_the_ceiling_each_kernel_meets() -> None:
    html = tables.kernels_table_html([parse_kernel_spec(s) for s in KERNELS], PRESETS)
    facts = cells(html)
    assert [row[4] for row in facts] == ["FP8 matrix units", "FP32 vector units", "FP32 vector units",
                                         "FP4 matrix units"]
    assert facts[0][:4] == ["1. GEMM 4096×4096×4096 fp8", "137.4 GFLOP", "50.33 MB", "2,731 FLOP/byte"]
    # One accelerator per row, one kernel per column: a new preset adds a row.
    assert heads(html, 1) == ["accelerator", "1. GEMM 4096×4096×4096 fp8", "2. GEMM 8192×8192×8192 fp32",
                              "3. Softmax 8192×8192 bf16", "4. GEMM 4096×4096×4096 fp4"]
    rows = {row[0]: row[1:] for row in cells(html, 1)}
    assert list(rows) == [p.name for p in PRESETS]
    fp8, fp32, softmax, fp4 = zip(*rows.values(), strict=True)
    by_name = [p.id for p in PRESETS]
    fp8, fp32, softmax, fp4 = ({pid: column[i] for i, pid in enumerate(by_name)}
                               for column in (fp8, fp32, softmax, fp4))
    assert fp8["a100"] == "no FP8 path"
    assert fp8["h100"] == "compute roof 1.979 PFLOP/s"
    assert fp32["h100"] == "compute roof 66.9 TFLOP/s"
    assert softmax["b200"] == "memory roof 75 TFLOP/s"
    assert fp4["b200"] == "compute roof 9 PFLOP/s"
    assert [fp4[pid] for pid in ("h100", "a100", "rtx-4090")] == ["no FP4 path"] * 3


def test_kernels_tables_hold_a_few_kernels_each() -> None:
    kernels = [parse_kernel_spec(f"add:{2**n}:bf16") for n in range(10, 22)]  # 12 kernels
    html = tables.kernels_table_html(kernels, PRESETS[:2])
    assert html.count("ainotes-kernel-roofs") == 3  # 5 + 5 + 2 kernel columns
    assert len(heads(html, 1)) == 1 + tables.KERNELS_PER_BOUNDS_TABLE and len(heads(html, 3)) == 1 + 2


def test_kernels_table_marks_unsupported_cells_for_styling() -> None:
    html = tables.kernels_table_html([parse_kernel_spec("gemm:64x64x64:fp8")], [BY_ID["a100"]])
    assert '<span class="ainotes-bound ainotes-bound--unsupported">no FP8 path</span>' in html


def test_a_rate_the_file_does_not_give_says_so_without_the_files_path(tmp_path: Path) -> None:
    path = tmp_path / "old.yaml"
    path.write_text("name: Old\ndense_fp16_tflops: 100\nmemory_bandwidth_tbps: 2\n"
                    "sources:\n  - title: T\n    url: https://example.com/\n", encoding="utf-8")
    html = tables.kernels_table_html([parse_kernel_spec("gemm:64x64x64:fp8")], [load_preset(path)])
    assert cells(html, 1)[0][1] == "not given"
    assert str(tmp_path) not in html  # the build machine's folders stay off the page


def test_presets_table_shows_capacity_and_each_vendors_unit_words() -> None:
    html = tables.presets_table_html(PRESETS)
    assert heads(html) == ["accelerator", "FP16/BF16 peak, matrix units", "memory bandwidth", "memory",
                           "ridge point"]
    rows = {row[0]: row[1:] for row in cells(html)}
    h100 = next(row for name, row in rows.items() if name.startswith("NVIDIA H100"))
    assert h100 == ["989.4 TFLOP/s 2:4 sparse 1.979 PFLOP/s", "3.35 TB/s", "80 GB",
                    "295 FLOP/byte 2:4 sparse 591 FLOP/byte"]
    assert any(name.endswith("h100 tensor cores and CUDA cores") for name in rows)
    assert "Matrix units: tensor cores; vector units: CUDA cores." in unescape(html)


def test_presets_table_lists_every_precision_with_its_source() -> None:
    html = tables.presets_table_html(PRESETS)
    precisions = html.split('ainotes-precisions">')[1]
    assert heads(precisions) == ["accelerator", "FP64", "TF32", "FP16/BF16", "FP8", "FP4", "INT8", "FP64", "FP32"]
    groups = re.findall(r'<th scope="colgroup"[^>]*colspan="(\d)">([^<]*)</th>', precisions)
    assert groups == [("6", "matrix units, dense TFLOP/s (TOPS for INT8)"), ("2", "vector units, dense TFLOP/s")]
    # Each row cites its source once, after the name, where every figure in it has the same one.
    rows = {row[0]: row[1:] for row in cells(precisions)}
    b200, h100, a100 = (rows[f"{BY_ID[i].name} [{n}]"] for i, n in (("b200", 1), ("h100", 2), ("a100", 1)))
    rtx = rows[f"{BY_ID['rtx-4090'].name} [1]"]
    assert h100[3] == "1,978.9 2:4 ×2"  # FP8 tensor: dense, sparse doubles it
    assert a100[3] == "no path"
    assert rtx[0] == "no path"  # no FP64 tensor path on Ada
    assert b200[4] == "9,000 2:4 ×2"
    assert a100[5] == "624 2:4 ×2"  # INT8, TOPS
    assert rtx[6] == "1.3" and "1/64 of the FP32 rate" in unescape(html)  # the note moves below
    assert 'data-label="FP8 matrix units, TFLOP/s"' in precisions
    assert 'data-label="INT8 matrix units, TOPS"' in precisions
    # Numbered sources, and B200's per-precision derivations from the eight-GPU totals.
    assert "[2] <a href=" in html
    assert "FP4 matrix units: NVIDIA HGX B200 totals ÷ 8 GPUs: 72 PFLOP/s → 9 PFLOP/s" in html


def test_a_row_with_two_sources_cites_each_figure(tmp_path: Path) -> None:
    """The B200's vector FP32 from a second document: no one source for the row, so every figure keeps its
    own number and the name none."""
    path = tmp_path / "b200.yaml"
    path.write_text((PRESETS_DIR / "b200.yaml").read_text(encoding="utf-8"), encoding="utf-8")
    text = path.read_text(encoding="utf-8")
    assert text.count("source: 1") > 2 and "sources:\n" in text
    path.write_text(text.replace("sources:\n", "sources:\n  - title: Second\n    url: https://example.com/b\n", 1)
                    .replace("source: 1", "source: 2").replace("source: 2", "source: 1", 1), encoding="utf-8")
    (row,) = cells(tables.precision_table_html([load_preset(path)]))
    assert not row[0].endswith("]")
    cited = [cell for cell in row[1:] if cell[0].isdigit()]
    assert cited and all(re.search(r"\[[12]\]", cell) for cell in cited), row
    assert sum("[1]" in cell for cell in cited) == 1, row


def test_precision_table_says_not_given_and_escapes_names(tmp_path: Path) -> None:
    path = tmp_path / "odd.yaml"
    path.write_text('name: "<b>Odd</b> & co"\ndense_fp16_tflops: 100\nmemory_bandwidth_tbps: 2\n'
                    "sources:\n  - title: T\n    url: https://example.com/\n", encoding="utf-8")
    html = tables.precision_table_html([load_preset(path)])
    assert "<b>Odd</b>" not in html and "&lt;b&gt;Odd&lt;/b&gt; &amp; co" in html
    (row,) = cells(html)
    columns = dict(zip(heads(html)[1:], row[1:], strict=True))
    assert columns["FP16/BF16"] == "100" and columns["FP8"] == "not given"


def _job(**fields: object) -> TrainingJob:
    base = {"params": 7e9, "tokens_per_second": 3.072e6, "gpus": 1024, "preset": "h100"}
    return TrainingJob.from_fields(base | fields, BY_ID, name="job")


def test_mfu_table_names_the_precision_of_the_peak() -> None:
    rows = cells(tables.mfu_table_html([_job()], BY_ID))
    assert rows[0][4] == "1,024 × 989.4 TFLOP/s BF16 h100"
    fp8 = cells(tables.mfu_table_html([_job(precision="fp8")], BY_ID))
    assert fp8[0][4] == "1,024 × 1.979 PFLOP/s FP8 h100"
    # A job never holds a peak its preset lacks: the one missing-peak message, when it is made.
    with pytest.raises(InputError, match=r"preset a100 has no FP8 tensor path \(its peaks: FP64 tensor"):
        _job(preset="a100", precision="fp8")


def test_preset_check_shows_what_the_loader_made_of_a_valid_file() -> None:
    html = tables.preset_check_html(MI300X)
    verdict = " ".join(unescape(re.sub(r"<[^>]+>", " ", html.split("ainotes-check--ok")[1].split("</p>")[0])).split())
    assert verdict == ('"> Valid: AMD Instinct MI300X (192 GB HBM3): FP16/BF16 1.307 PFLOP/s dense on its matrix units '
                       "(Matrix Cores), 5.3 TB/s, 192 GB of memory, ridge 247 FLOP/byte")
    (row,) = cells(html.split('ainotes-precisions">')[1])
    assert row[:3] == ["AMD Instinct MI300X (192 GB HBM3) [1]", "163.4", "163.4"]  # FP64 and FP32 matrix


def test_preset_check_shows_the_slip_and_a_confirmed_figures_warning() -> None:
    slip = tables.preset_check_html(MI300X.replace("memory_bandwidth_tbps: 5.3", "memory_bandwidth_tbps: 5300"))
    assert ("<code>presets/example.yaml:4: &#x27;memory_bandwidth_tbps&#x27; 5300 is outside 0.05-100 TB/s per chip, "
            "where every accelerator&#x27;s memory lies: GB/s typed as TB/s? (5300 GB/s = 5.3 TB/s)</code>") in slip
    confirmed = MI300X.replace("fp8: {dense_tflops: 2614.9, sparse_tflops: 5229.8, source: 1}",
                               "fp8: {dense_tflops: 5229.8, confirmed_dense: true}")
    html = tables.preset_check_html(confirmed)
    assert "Warning: <code>presets/example.yaml:18: &#x27;peaks.tensor.fp8&#x27; 5229.8 is twice" in html
    assert tempfile.gettempdir() not in html  # the build machine's folders stay off the page
