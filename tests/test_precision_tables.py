"""Tables per precision: the ceiling each kernel meets per preset, every precision's peak with its source."""

from __future__ import annotations

import re
from html import unescape
from pathlib import Path
from types import SimpleNamespace

import pytest

from ainotes import tables
from ainotes.errors import InputError
from ainotes.hardware import load_preset, load_presets
from ainotes.kernels import parse_kernel_spec
from preset_support import FIXTURE_PRESETS

PRESETS_DIR = FIXTURE_PRESETS  # the published NVIDIA figures, whatever ships in presets/
PRESETS = load_presets(PRESETS_DIR)
BY_ID = {p.id: p for p in PRESETS}


def cells(html: str) -> list[list[str]]:
    """Rows of the first table as plain text cells."""
    body = html.split("<tbody>")[1].split("</tbody>", maxsplit=1)[0]
    return [[" ".join(unescape(re.sub(r"<[^>]+>", " ", c)).split())
             for c in re.findall(r"<t[hd][^>]*>(.*?)</t[hd]>", row)] for row in body.split("</tr>") if row]


def test_kernels_table_names_the_ceiling_each_kernel_meets() -> None:
    kernels = [parse_kernel_spec(s) for s in ("gemm:4096x4096x4096:fp8", "gemm:8192x8192x8192:fp32",
                                              "softmax:8192x8192:bf16", "gemm:4096x4096x4096:fp4")]
    rows = cells(tables.kernels_table_html(kernels, PRESETS))
    ids = [p.id for p in PRESETS]
    fp8, fp32, softmax, fp4 = ({pid: row[5 + i] for i, pid in enumerate(ids)} | {"ceiling": row[4]} for row in rows)
    assert fp8["ceiling"] == "FP8 tensor"
    assert fp8["a100"] == "no FP8 path"
    assert fp8["h100"] == "compute roof 1.979 PFLOP/s"
    assert fp32["ceiling"] == "FP32 vector"
    assert fp32["h100"] == "compute roof 66.9 TFLOP/s"
    assert softmax["b200"] == "memory roof 75 TFLOP/s"
    assert fp4["b200"] == "compute roof 9 PFLOP/s"
    assert [fp4[pid] for pid in ("h100", "a100", "rtx-4090")] == ["no FP4 path"] * 3


def test_kernels_table_marks_unsupported_cells_for_styling() -> None:
    html = tables.kernels_table_html([parse_kernel_spec("gemm:64x64x64:fp8")], [BY_ID["a100"]])
    assert '<span class="ainotes-bound ainotes-bound--unsupported">no FP8 path</span>' in html


def test_presets_table_lists_every_precision_with_its_source() -> None:
    html = tables.presets_table_html(PRESETS)
    precision_table = html.split('ainotes-precisions">')[1]
    rows = {row[0]: row[1:] for row in cells(precision_table)}
    assert list(rows) == ["FP64 tensor", "TF32 tensor", "FP16 tensor", "BF16 tensor", "FP8 tensor", "FP4 tensor",
                          "INT8 tensor", "FP64 vector", "FP32 vector"]
    b200, h100, a100, rtx = zip(*rows.values(), strict=True)
    assert h100[rows_index("FP8 tensor")] == "1.979 PFLOP/s [2] 2:4 sparse 3.958 PFLOP/s"
    assert a100[rows_index("FP8 tensor")] == "no path"
    assert rtx[rows_index("FP64 tensor")] == "no path"
    assert b200[rows_index("FP4 tensor")] == "9 PFLOP/s [1] 2:4 sparse 18 PFLOP/s"
    assert a100[rows_index("INT8 tensor")].startswith("624 TOP/s [1] 2:4 sparse 1.248 POP/s")
    assert rtx[rows_index("FP64 vector")] == "1.3 TFLOP/s [1] 1/64 of the FP32 rate"
    # Numbered sources, and B200's per-precision derivations from the eight-GPU totals.
    assert "[2] <a href=" in html
    assert "FP4 tensor: NVIDIA HGX B200 totals ÷ 8 GPUs: 72 PFLOP/s → 9 PFLOP/s" in html


def rows_index(name: str) -> int:
    return ["FP64 tensor", "TF32 tensor", "FP16 tensor", "BF16 tensor", "FP8 tensor", "FP4 tensor", "INT8 tensor",
            "FP64 vector", "FP32 vector"].index(name)


def test_precision_table_says_not_given_and_escapes_names(tmp_path: Path) -> None:
    path = tmp_path / "odd.yaml"
    path.write_text('name: "<b>Odd</b> & co"\ndense_fp16_tflops: 100\nmemory_bandwidth_tbps: 2\n'
                    "sources:\n  - title: T\n    url: https://example.com/\n", encoding="utf-8")
    html = tables.precision_table_html([load_preset(path)])
    assert "<b>Odd</b>" not in html and "&lt;b&gt;Odd&lt;/b&gt; &amp; co" in html
    rows = {row[0]: row[1] for row in cells(html)}
    assert rows["FP16 tensor"] == "100 TFLOP/s" and rows["FP8 tensor"] == "not given"


def _job(**fields: object) -> SimpleNamespace:
    base = {"name": "job", "params": 7e9, "tokens_per_second": 3.072e6, "gpus": 1024, "preset_id": "h100",
            "peak_tflops": None, "layers": None, "heads": None, "head_dim": None, "seq_len": None, "recompute": "none"}
    return SimpleNamespace(**(base | fields))


def test_mfu_table_names_the_precision_of_the_peak() -> None:
    rows = cells(tables.mfu_table_html([_job()], BY_ID))
    assert rows[0][5] == "1,024 × 989.4 TFLOP/s BF16 h100"
    fp8 = cells(tables.mfu_table_html([_job(precision="fp8")], BY_ID))
    assert fp8[0][5] == "1,024 × 1.979 PFLOP/s FP8 h100"
    with pytest.raises(InputError, match=r"job 'job': preset a100 has no dense FP8 tensor peak \(no path\)"):
        tables.mfu_table_html([_job(preset_id="a100", precision="fp8")], BY_ID)
