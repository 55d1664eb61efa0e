"""Measured files on the charts: an ncu CSV's kernels on the roofline (``roofline`` fence, ``measured:``),
with the numbers ``ainotes measured --json`` prints for the same file."""

from __future__ import annotations

import json
import re
import shutil
from html import unescape
from pathlib import Path

import pytest

from ainotes.base.errors import InputError
from ainotes.build.site import NotesSite
from ainotes.cli import main
from ainotes.markdown.extension import convert_page

FIXTURES = Path(__file__).parent / "fixtures" / "measured"


@pytest.fixture()
def project(tmp_path):
    """A project root: presets (fixture copies) beside docs/ holding the measured files."""
    shutil.copytree(FIXTURES / "presets", tmp_path / "presets")
    shutil.copytree(FIXTURES / "nccl-tests", tmp_path / "docs" / "measured")
    shutil.copy(FIXTURES / "ncu" / "gemm-raw.csv", tmp_path / "docs" / "measured" / "gemm-raw.csv")
    return tmp_path


def _page(site: NotesSite, kind: str, body: str) -> str:
    return convert_page(site, f"# M\n\n```{kind}\n{body}\n```\n", "notes/m.md", "notes/m/")


def _cli_json(capsys, project: Path, file: str, *flags: str) -> dict:
    assert main(["measured", str(project / file), "--presets-dir", str(project / "presets"), *flags, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def _spec(site: NotesSite, chart_id: str) -> dict:
    return json.loads(site.embed_files(site.charts[chart_id])["json"])


def _text(html: str) -> str:
    return unescape(re.sub(r"<[^>]+>", " ", html))


def _table_rows(html: str) -> list[list[str]]:
    rows = re.findall(r'<tr role="row">(.*?)</tr>', html)
    return [[unescape(re.sub(r"<[^>]+>", "", c)) for c in re.findall(r"<t[hd][^>]*>(.*?)</t[hd]>", row)]
            for row in rows[1:]]


def test_roofline_points_are_the_commands_kernels(project, capsys):
    site = NotesSite(project / "presets")
    html = _page(site, "roofline", "presets: [a100]\nmeasured: docs/measured/gemm-raw.csv\nid: ncu")
    record = _cli_json(capsys, project, "docs/measured/gemm-raw.csv", "--preset", "a100")
    spec = _spec(site, "ncu")
    points = spec["datasets"]["points"]
    assert [(p["name"], p["x"], p["y"], p["fraction"]) for p in points] == [
        (k["name"], k["intensity"], k["flops_per_s"], k["fraction_of_roof"]) for k in record["kernels"]]
    # Each kernel's roof passes through the roof the command holds it to, at its intensity.
    roofs = spec["datasets"]["roofs"]
    for point, kernel in zip(points, record["kernels"], strict=True):
        line = sorted((r["x"], r["y"]) for r in roofs if r["roof"] == point["roof"])
        flat = [y for x, y in line if x >= kernel["intensity"]]
        assert max(flat) == pytest.approx(kernel["roof_flops_per_s"])
    # The fraction reached, by hand from the fixture: 17.19 GFLOP in 1.18 ms = 14.56 TFLOP/s of the A100's
    # 19.5 TFLOP/s FP32 (74.7 %); 8.59 GFLOP in 61.25 µs = 140.2 of 312 TFLOP/s FP16 on tensor cores (44.9 %).
    caption = _text(html)
    assert "2 measured kernels from measured/gemm-raw.csv, 45–75 % of their roof on the NVIDIA A100" in caption
    assert [p["label"] for p in points] == ["1: 75 % of FP32 vector roof", "2: 45 % of FP16 tensor roof"]
    assert [row[-1] for row in _table_rows(html)] == ["74.7 %", "44.9 %"]
    assert 'href="../../measured/gemm-raw.csv" download' in html
    svg = site.embed_files(site.charts["ncu"])["svg"]
    assert "<svg" in (svg if isinstance(svg, str) else svg.decode())  # the still draws without a script


def test_a_kernel_above_its_roof_is_flagged(project, capsys):
    """A duration logged ten times too short puts the FP32 GEMM at 146 TFLOP/s, above the A100's 19.5."""
    path = project / "docs" / "measured" / "gemm-raw.csv"
    path.write_text(path.read_text().replace('"1,180,320"', '"118,032"'))
    site = NotesSite(project / "presets")
    html = _page(site, "roofline", "presets: [a100]\nmeasured: docs/measured/gemm-raw.csv\nid: ncu")
    record = _cli_json(capsys, project, "docs/measured/gemm-raw.csv", "--preset", "a100")
    assert [k["above_roof"] for k in record["kernels"]] == [True, False]
    points = _spec(site, "ncu")["datasets"]["points"]
    assert points[0]["above"] and points[0]["label"] == "1: above its FP32 vector roof (747 %)"
    text = _text(html)
    assert "Kernels 1: above its roof" not in text and "Kernel 1: above its roof: a units or FLOP-count error" in text
    assert _table_rows(html)[0][-1].endswith("(above its roof: a units or FLOP-count error)")


@pytest.mark.parametrize(("body", "words"), [
    ("presets: [a100]\nmeasured: ../gemm.csv", "notes/m.md:5: 'measured' must be a path under docs/"),
    ("presets: [a100]\nmeasured: /etc/passwd", "notes/m.md:5: 'measured' must be a path under docs/"),
    ("presets: [a100]\nmeasured: docs/measured/none.csv", "notes/m.md:5: "),
    ("measured: docs/measured/gemm-raw.csv", "notes/m.md:4: a roofline with 'measured' holds the kernels"),
    ("presets: [a100, h100]\nmeasured: docs/measured/gemm-raw.csv", "notes/m.md:4: a roofline with 'measured'"),
    ("presets: [a100]\nmeasured: docs/measured/gemm-raw.csv\nkernels: ['add:1024:bf16']",
     "notes/m.md:6: 'measured' and 'kernels' do not go together"),
    ("presets: [a100]\nmeasured: docs/measured/gb200-nvl72-allreduce-partial.txt", "notes/m.md:5: "),
])
def test_roofline_mistakes_are_one_line_naming_the_page(project, body, words):
    with pytest.raises(InputError) as caught:
        _page(NotesSite(project / "presets"), "roofline", body)
    message = str(caught.value)
    assert message.startswith(words) and "\n" not in message
    if "none.csv" in body:
        assert "notes/m.md:5: docs/measured/none.csv: no such file" in message


# -- an nccl-tests log on the collective cost chart ------------------------------------------------------

H100_LOG = "docs/measured/h100-2node-16rank-allreduce.md"


def test_cost_chart_points_and_errors_are_the_commands(project, capsys):
    site = NotesSite(project / "presets")
    html = _page(site, "collective-cost", f"measured: {H100_LOG}\nlink: ib-ndr\nid: run")
    record = _cli_json(capsys, project, H100_LOG, "--link", "ib-ndr")
    spec = _spec(site, "run")
    points = spec["datasets"]["points"]
    # Every size the command holds against the model, with the time and busbw nccl-tests printed.
    rows = {row["bytes"]: row["out_of_place"] for row in record["rows"]}
    modelled = record["model"]["rows"]
    assert [(p["bytes"], p["time_s"]) for p in points] == [(m["bytes"], m["measured_s"]) for m in modelled]
    assert [p["busbw_gbps"] for p in points] == [rows[p["bytes"]]["busbw_gbps"] for p in points]
    # The log's last row: 8 GiB at 338.82 GB/s busbw.
    assert len(points) == 31 and points[-1]["bytes"] == 8_589_934_592 and points[-1]["busbw_gbps"] == 338.82
    # The table under the chart: the command's model column and error, size by size.
    table = _table_rows(html)
    assert [row[-1] for row in table] == [f"{m['error'] * 100:+.1f} %" for m in record["model"]["rows"]]
    assert [row[4] for row in table] == [m["algorithm"] for m in record["model"]["rows"]]
    text = _text(html)
    fitted = record["fit"]
    assert f"B = {fitted['bandwidth_gbps']:.4g} GB/s, beside the preset's" in text
    assert "16-rank all-reduce" in text and site.charts["run"].about["ranks"] == 16
    assert f'href="../../measured/{H100_LOG.rsplit("/", 1)[1]}" download' in html
    # The second chart, bus bandwidth: the same points, its own embed files.
    busbw = _spec(site, "run-busbw")
    assert busbw["datasets"]["points"] == points and busbw["layer"][2]["encoding"]["y"]["field"] == "busbw_gbps"
    # The lines span the run's sizes: the smallest and the largest point lie on the plot.
    sizes = [line["bytes"] for line in spec["datasets"]["lines"]]
    assert min(sizes) <= points[0]["bytes"] and max(sizes) >= points[-1]["bytes"]


@pytest.mark.parametrize(("body", "words"), [
    (f"measured: {H100_LOG}\nranks: 8", "notes/m.md:4: docs/measured/h100-2node-16rank-allreduce.md is a 16-rank "
                                        "all-reduce, but the fence says ranks: 8"),
    (f"measured: {H100_LOG}\nop: all-gather", "notes/m.md:4: docs/measured/h100-2node-16rank-allreduce.md is a "
                                              "16-rank all-reduce, but the fence says op: all-gather"),
    ("measured: ../x.log", "notes/m.md:4: 'measured' must be a path under docs/"),
    ("measured: docs/measured/none.log", "notes/m.md:4: docs/measured/none.log: no such file"),
    ("measured: docs/measured/gb10-2node-allreduce-truncated.txt", "notes/m.md:4: "),
    (f"measured: {H100_LOG}\nlink: nope", "notes/m.md:5: unknown link 'nope'"),
])
def test_cost_mistakes_are_one_line_naming_the_page(project, body, words):
    with pytest.raises(InputError) as caught:
        _page(NotesSite(project / "presets"), "collective-cost", body)
    message = str(caught.value)
    assert message.startswith(words) and "\n" not in message


@pytest.mark.parametrize("width", [300, 680])
def test_cost_chart_legends_stay_inside_a_phones_width(project, width, tmp_path_factory, monkeypatch):
    """Every legend label ('fitted to the run' last) lies inside the chart at a 360 px phone's 300 px
    and at a desk's width: the three legends stack in one column instead of running off the right."""
    from ainotes import render
    from ainotes.charts import measured_cost
    from ainotes.measurements import report
    from ainotes.measurements.read import read_measured
    from svg_text import text_boxes

    monkeypatch.setenv("AINOTES_CACHE_DIR", str(tmp_path_factory.getbasetemp() / "render-cache"))
    site = NotesSite(project / "presets")
    link = site.links()["ib-ndr"]
    record = report.nccl_record(read_measured(project / H100_LOG), link)
    spec = measured_cost.measured_cost_spec(record, link, title="Measured all-reduce", theme="light")
    boxes = text_boxes(render.svg({**spec, "width": width}))
    labels = {box.text: box for box in boxes}
    for label in (measured_cost.FITTED, measured_cost.MEASURED, "model: ring"):
        assert label in labels and labels[label].right <= width + 0.5, (label, labels.get(label))


@pytest.mark.parametrize("dram_bytes", ["as measured", "zero"])
def test_roofline_still_has_no_unnamed_empty_mark_group(project, dram_bytes):
    """No mixed kernel (the usual file) leaves the own-roof layer empty, and DRAM bytes of 0 leave no point
    to draw: Vega would write each such layer as an empty ``role="graphics-symbol"`` group with no name, which
    a screen reader announces as an unlabelled image (axe-core's svg-img-alt)."""
    path = project / "docs" / "measured" / "gemm-raw.csv"
    if dram_bytes == "zero":
        path.write_text(path.read_text().replace('"51,380,224"', '"0"').replace('"25,690,112"', '"0"'))
    site = NotesSite(project / "presets")
    html = _page(site, "roofline", "presets: [a100]\nmeasured: docs/measured/gemm-raw.csv\nid: ncu")
    assert ("2 measured kernels" in _text(html)) == (dram_bytes == "as measured")
    svg = site.embed_files(site.charts["ncu"])["svg"]
    svg = svg if isinstance(svg, str) else svg.decode()
    groups = re.findall(r'<g class="mark-[^"]*"[^>]*role="graphics-symbol"[^>]*>', svg)
    assert groups and all("aria-label=" in g or "aria-hidden=" in g for g in groups), groups
    assert not re.findall(r'<g class="mark-[^"]*"[^>]*role="graphics-symbol"(?![^>]*aria-hidden)[^>]*/>', svg)
