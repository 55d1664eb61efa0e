"""The `ainotes` command: published figures through the flags, and one-line errors with exit status 2."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from ainotes.cli import main
from preset_support import FIXTURE_IDS, FIXTURE_PRESETS, SHIPPED_PRESETS, UNKNOWN_ID, shipped_ids

PRESETS_DIR = FIXTURE_PRESETS  # fixed figures, whatever ships in presets/
AINOTES = Path(sys.executable).with_name("ainotes")

PALM_FLAGS = [
    "mfu", "--params", "540e9", "--tokens-per-second", "238.3e3", "--gpus", "6144", "--peak-tflops", "275",
    "--layers", "118", "--heads", "48", "--head-dim", "256", "--seq-len", "2048",
]

GOOD_PRESET = (
    "name: Test GPU\ndense_fp16_tflops: 100\nmemory_bandwidth_tbps: 2\n"
    "sources:\n  - title: Vendor table\n    url: https://example.com/spec\n"
)


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    status = main(["--presets-dir", str(PRESETS_DIR), *argv])
    captured = capsys.readouterr()
    return status, captured.out, captured.err


def assert_one_line_error(status: int, out: str, err: str, command: str, *fragments: str) -> None:
    assert status == 2
    assert "Traceback" not in err
    lines = err.splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith(f"ainotes {command}: "), lines[0]
    for fragment in fragments:
        assert fragment in lines[0]


# --- presets and validate ------------------------------------------------------------------


def test_presets_table_shows_figures_and_ridges(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, err = run(capsys, "presets")
    assert (status, err) == (0, "")
    first_table = out.split("\n\n")[0]
    rows = {line.split()[0]: line for line in first_table.splitlines() if line.split() and line.split()[0] in
            FIXTURE_IDS}
    assert list(rows) == list(FIXTURE_IDS)
    assert rows["h100"].split()[-5:] == ["989.4", "1978.8", "3.35", "295.3", "590.7"]
    assert rows["b200"].split()[-5:] == ["2250", "4500", "8", "281.3", "562.5"]  # 281.25: ties half-up
    assert "b200: NVIDIA HGX B200 totals ÷ 8 GPUs: 18 PFLOP/s → 2.25 PFLOP/s; 64 TB/s → 8 TB/s;" in out


def test_presets_json(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = run(capsys, "presets", "--json")
    records = {p["id"]: p for p in json.loads(out)["presets"]}
    assert status == 0
    assert records["b200"]["dense_fp16_tflops"] == 2250.0
    assert records["b200"]["memory_bandwidth_tbps"] == 8.0
    assert records["h100"]["dense_ridge_flop_per_byte"] == pytest.approx(295.34, abs=0.01)
    assert records["h100"]["sparse_ridge_flop_per_byte"] == pytest.approx(2 * 295.34, abs=0.02)
    assert records["a100"]["sources"][0]["url"].startswith("https://")


def test_validate_shipped_presets(capsys: pytest.CaptureFixture[str]) -> None:
    status = main(["--presets-dir", str(SHIPPED_PRESETS), "validate"])
    out, err = capsys.readouterr()
    assert (status, err) == (0, "")
    oks = [line for line in out.splitlines() if line.startswith("OK ")]
    gpus = [line.split(": ", 1)[1].split(" ", 1)[0] for line in oks if ": link " not in line and ": model " not in line]
    assert sorted(gpus) == list(shipped_ids())  # every GPU file in presets/
    links = sorted(p.stem for p in (SHIPPED_PRESETS / "links").glob("*.yaml"))
    assert sorted(line.split(": link ", 1)[1].split(" ", 1)[0] for line in oks if ": link " in line) == links
    models = sorted(p.stem for p in (SHIPPED_PRESETS / "models").glob("*.yaml"))
    assert sorted(line.split(": model ", 1)[1].split(" ", 1)[0] for line in oks if ": model " in line) == models
    assert out.splitlines()[-1] == f"{len(gpus) + len(links) + len(models)} OK, 0 with errors"


def test_validate_a_link_file_checks_it_as_a_link(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    from ainotes.presets.links import default_links_dir

    shipped = sorted(default_links_dir().glob("*.yaml"))[0]
    status, out, err = run(capsys, "validate", str(shipped))
    assert (status, err) == (0, "")
    assert out.splitlines()[0].startswith(f"OK {shipped}: link {shipped.stem} (")
    folder = tmp_path / "links"
    folder.mkdir()
    bad = folder / "slow-link.yaml"
    bad.write_text(re.sub(r"(?m)^latency_us:.*$", "latency_us: -1", shipped.read_text(encoding="utf-8")))
    status, out, err = run(capsys, "validate", str(bad))
    assert status == 2
    assert len(err.splitlines()) == 1 and err.startswith(f"ainotes validate: {bad}:")
    assert "latency_us" in err and "-1" in err and "dense_fp16_tflops" not in err  # a link's field, not a GPU's


def test_validate_reports_each_bad_file_and_exits_2(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    (tmp_path / "good.yaml").write_text(GOOD_PRESET, encoding="utf-8")
    (tmp_path / "bad.yaml").write_text(GOOD_PRESET.replace("memory_bandwidth_tbps: 2", "memory_bandwidth_tbps: -3.0"))
    (tmp_path / "worse.yml").write_text("name: [\n")
    status = main(["validate", str(tmp_path)])
    out, err = capsys.readouterr()
    assert status == 2
    assert f"OK {tmp_path / 'good.yaml'}: good (Test GPU)" in out
    errors = err.splitlines()
    assert len(errors) == 2
    line = next(n for n, text in enumerate(GOOD_PRESET.splitlines(), 1) if text.startswith("memory_bandwidth_tbps"))
    assert errors[0] == (f"ainotes validate: {tmp_path / 'bad.yaml'}:{line}: "
                         "'memory_bandwidth_tbps' must be a finite number > 0: -3.0")
    assert errors[1].startswith(f"ainotes validate: {tmp_path / 'worse.yml'}: line 1: YAML does not parse: ")
    assert out.splitlines()[-1] == "1 OK, 2 with errors"


def test_bad_presets_folder_is_one_line(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    status = main(["--presets-dir", str(tmp_path / "missing"), "presets"])
    _, err = capsys.readouterr()
    assert_one_line_error(status, "", err, "presets", str(tmp_path / "missing"), "does not exist")


def test_presets_dir_after_the_command(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    (tmp_path / "only-one.yaml").write_text(GOOD_PRESET, encoding="utf-8")
    status = main(["presets", "--json", "--presets-dir", str(tmp_path)])
    out, _ = capsys.readouterr()
    assert status == 0
    assert [p["id"] for p in json.loads(out)["presets"]] == ["only-one"]


# --- mfu ------------------------------------------------------------------------------------


def test_palm_540b_mfu_through_the_flags(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, err = run(capsys, *PALM_FLAGS)
    assert (status, err) == (0, "")
    assert out.splitlines()[0] == "MFU: 46.2 %"
    assert out.splitlines()[1] == "HFU: 46.2 %  (recompute: none)"
    assert "6N + 12·L·H·Q·S" in out


def test_palm_mfu_json(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = run(capsys, *PALM_FLAGS, "--recompute", "full", "--json")
    record = json.loads(out)
    assert status == 0
    assert round(record["mfu"] * 100, 1) == 46.2
    assert record["hfu"] > record["mfu"]
    assert record["attention"] == {"layers": 118, "heads": 48, "head_dim": 256, "seq_len": 2048}
    assert record["hardware_flops_per_token"] == pytest.approx(8 * 540e9 + 16 * 118 * 48 * 256 * 2048)


def test_mfu_with_a_preset_uses_its_dense_rate(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = run(capsys, "mfu", "--params", "7e9", "--tokens-per-second", "3000", "--gpus", "1",
                         "--preset", "h100", "--json")
    assert status == 0
    record = json.loads(out)
    assert record["mfu"] == pytest.approx(6 * 7e9 * 3000 / 989.4e12)
    assert record["precision"] == "bf16"
    assert record["peak_source"] == "--preset h100: NVIDIA H100 SXM5 80 GB, dense bf16 tensor"


def test_mfu_names_the_precision_of_the_peak(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = run(capsys, "mfu", "--params", "7e9", "--tokens-per-second", "3000", "--gpus", "1",
                         "--preset", "h100", "--precision", "fp16")
    assert status == 0
    assert "of 989.4 TFLOP/s peak (--preset h100: NVIDIA H100 SXM5 80 GB, dense fp16 tensor)" in out


@pytest.mark.parametrize(
    ("changes", "fragments"),
    [
        (["--params", "0"], ["--params must be a finite number > 0: '0'"]),
        (["--params", "-5e9"], ["--params must be a finite number > 0: '-5e9'"]),
        (["--params", "nan"], ["--params must be a finite number > 0: 'nan'"]),
        (["--tokens-per-second", "inf"], ["--tokens-per-second must be a finite number > 0: 'inf'"]),
        (["--tokens-per-second", "fast"], ["--tokens-per-second must be a finite number > 0: 'fast'"]),
        (["--gpus", "0"], ["--gpus must be a whole number >= 1: '0'"]),
        (["--gpus", "2.5"], ["--gpus must be a whole number >= 1: '2.5'"]),
        (["--peak-tflops", "-1"], ["--peak-tflops must be a finite number > 0: '-1'"]),
        (["--recompute", "some"], ["--recompute must be one of none, selective, full: 'some'"]),
        (["--layers", "0"], ["--layers must be a whole number >= 1: '0'"]),
        (["--precision", "fp9"], ["--precision must be one of fp64, tf32, fp16, bf16, fp8, fp4, int8: 'fp9'"]),
    ],
)
def test_bad_mfu_flags(capsys: pytest.CaptureFixture[str], changes: list[str], fragments: list[str]) -> None:
    argv = list(PALM_FLAGS)
    for flag, value in zip(changes[::2], changes[1::2], strict=True):
        if flag in argv:
            argv[argv.index(flag) + 1] = value
        else:
            argv += [flag, value]
    status, out, err = run(capsys, *argv)
    assert_one_line_error(status, out, err, "mfu", *fragments)
    assert out == ""


def test_attention_flags_go_together(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, err = run(capsys, "mfu", "--params", "1e9", "--tokens-per-second", "1e4", "--gpus", "8",
                           "--peak-tflops", "100", "--layers", "24", "--heads", "16")
    assert_one_line_error(status, out, err, "mfu", "--layers, --heads given, --head-dim, --seq-len missing")


def test_unknown_preset(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, err = run(capsys, "mfu", "--params", "1e9", "--tokens-per-second", "1e4", "--gpus", "8",
                           "--preset", UNKNOWN_ID)
    assert_one_line_error(status, out, err, "mfu", f"--preset: unknown preset '{UNKNOWN_ID}' (known: ", "a100", "b200")


def test_preset_and_peak_are_exclusive(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, err = run(capsys, "mfu", "--params", "1e9", "--tokens-per-second", "1e4", "--gpus", "8",
                           "--preset", "h100", "--peak-tflops", "100")
    assert_one_line_error(status, out, err, "mfu", "not allowed with argument")


def test_missing_required_flags_are_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, err = run(capsys, "mfu", "--params", "1e9")
    assert_one_line_error(status, out, err, "mfu", "required", "--tokens-per-second", "--gpus")


def test_unknown_command_is_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    status, _, err = run(capsys, "rooflines")
    assert status == 2 and len(err.splitlines()) == 1
    assert err.startswith("ainotes: argument COMMAND: invalid choice: 'rooflines'")


# --- collective -----------------------------------------------------------------------------


def test_collective_json_follows_the_contract(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = run(capsys, "collective", "all-reduce", "--ranks", "4", "--json")
    record = json.loads(out)
    assert status == 0
    assert {"op", "ranks", "root", "before", "after", "frames"} <= set(record)
    assert (record["op"], record["ranks"], record["root"]) == ("all-reduce", 4, None)
    column_sums = [sum(rank[c] for rank in record["before"]) for c in range(4)]
    assert all(rank == column_sums for rank in record["after"])


@pytest.mark.parametrize(
    ("argv", "fragments"),
    [
        (["all-reduce", "--ranks", "0", "--json"], ["--ranks must be between 2 and 8: 0"]),
        (["all-reduce", "--ranks", "1", "--json"], ["--ranks must be between 2 and 8: 1"]),
        (["all-reduce", "--ranks", "9", "--json"], ["--ranks must be between 2 and 8: 9"]),
        (["all-reduce", "--ranks", "four", "--json"], ["argument --ranks", "must be a whole number: 'four'"]),
        (["allreduce", "--json"], ["OP must be one of all-reduce, reduce", "'allreduce'"]),
        (["scatter", "--root", "4", "--json"], ["--root must be between 0 and 3: 4"]),
        (["scatter", "--root", "-1", "--json"], ["--root must be between 0 and 3: -1"]),
        (["all-gather", "--root", "1", "--json"], ["--root does not apply to all-gather"]),
        (["broadcast"], ["one of the arguments --json -o/--output is required"]),
    ],
)
def test_bad_collective_input(capsys: pytest.CaptureFixture[str], argv: list[str], fragments: list[str]) -> None:
    status, out, err = run(capsys, "collective", *argv)
    assert_one_line_error(status, out, err, "collective", *fragments)


def test_collective_to_files(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    svg, data, page = tmp_path / "a.svg", tmp_path / "a.json", tmp_path / "a.html"
    for path in (svg, data, page):
        assert run(capsys, "collective", "scatter", "--root", "1", "-o", str(path))[0] == 0
    assert svg.read_text(encoding="utf-8").lstrip().startswith(("<svg", "<?xml"))
    assert json.loads(data.read_text(encoding="utf-8"))["root"] == 1
    assert "<html" in page.read_text(encoding="utf-8").lower()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.html", "a.json", "a.svg"]  # no temporary files left


# --- roofline and output files ------------------------------------------------------------


def test_roofline_json_is_vega_lite(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    output = tmp_path / "roofline.json"
    status, _, err = run(capsys, "roofline", "--preset", "h100", "b200", "--sparsity",
                           "--kernel", "gemm:8192x8192x8192", "QKV=gemm:4096x12288x4096:fp16",
                           "--title", "Two GPUs", "-o", str(output))
    assert (status, err) == (0, "")
    spec = json.loads(output.read_text(encoding="utf-8"))
    assert "vega-lite" in spec["$schema"]
    text = json.dumps(spec)
    assert "QKV" in text and "Two GPUs" in text
    assert "NVIDIA H100 SXM5 80 GB" in text and "A100" not in text


@pytest.mark.parametrize(
    ("argv", "fragments"),
    [
        (["-o", "{tmp}/chart.gif"], ["-o {tmp}/chart.gif", "must end in .svg, .png, .json or .html", "'.gif'"]),
        (["-o", "{tmp}/chart"], ["must end in", "'no suffix'"]),
        (["--preset", UNKNOWN_ID, "-o", "{tmp}/chart.json"], [f"--preset: unknown preset '{UNKNOWN_ID}'"]),
        (["--kernel", "gemm:0x1x1", "-o", "{tmp}/chart.json"],
         ["--kernel: kernel spec 'gemm:0x1x1'", "M must be >= 1: 0"]),
        (["--kernel", "conv:3x3", "-o", "{tmp}/chart.json"], ["unknown kernel kind 'conv'"]),
        (["--title", "", "-o", "{tmp}/chart.json"], ["argument --title", "must be one non-empty line"]),
        (["-o", "{tmp}/no/such/folder/chart.json"], ["folder '{tmp}/no/such/folder' does not exist"]),
        (["-o", "{tmp}"], ["is a folder, not a file"]),
    ],
)
def test_bad_roofline_input_writes_nothing(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, argv: list[str], fragments: list[str]
) -> None:
    folder = tmp_path / "out"
    folder.mkdir()
    argv = [a.replace("{tmp}", str(folder)) for a in argv]
    fragments = [f.replace("{tmp}", str(folder)) for f in fragments]
    status, out, err = run(capsys, "roofline", *argv)
    assert_one_line_error(status, out, err, "roofline", *fragments)
    assert list(folder.iterdir()) == []


def test_failed_run_leaves_an_existing_output_untouched(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    output = tmp_path / "chart.json"
    output.write_text("previous chart", encoding="utf-8")
    status, _, _ = run(capsys, "roofline", "--kernel", "gemm:1x1", "-o", str(output))
    assert status == 2
    assert output.read_text(encoding="utf-8") == "previous chart"
    assert [p.name for p in tmp_path.iterdir()] == ["chart.json"]


def test_roofline_rendered_formats(capsys: pytest.CaptureFixture[str], tmp_path: Path,
                                   monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AINOTES_CACHE_DIR", str(tmp_path / "cache"))
    charts = tmp_path / "charts"
    charts.mkdir()
    for name in ("r.svg", "r.png", "r.html"):
        status, _, err = run(capsys, "roofline", "--preset", "h100", "--kernel", "x <b>=add:1048576",
                             "--title", "A & B", "-o", str(charts / name))
        assert (status, err) == (0, "")
    svg = (charts / "r.svg").read_text(encoding="utf-8")
    assert svg.startswith("<svg") and "x &lt;b&gt;" in svg and "x <b>" not in svg
    assert (charts / "r.png").read_bytes().startswith(b"\x89PNG\r\n\x1a\n")
    page = (charts / "r.html").read_text(encoding="utf-8")
    assert page.lower().startswith("<!doctype html") and "x <b>" not in page
    assert sorted(p.name for p in charts.iterdir()) == ["r.html", "r.png", "r.svg"]


def test_cache_info_and_clear(capsys: pytest.CaptureFixture[str], tmp_path: Path,
                              monkeypatch: pytest.MonkeyPatch) -> None:
    cache = tmp_path / "cache"
    monkeypatch.setenv("AINOTES_CACHE_DIR", str(cache))
    assert run(capsys, "roofline", "--preset", "a100", "-o", str(tmp_path / "r.svg"))[0] == 0
    status, out, _ = run(capsys, "cache", "info")
    assert status == 0 and out.splitlines()[0] == f"render cache: {cache}"
    assert not out.splitlines()[1].startswith("0 files")
    status, out, _ = run(capsys, "cache", "clear")
    assert status == 0 and out.startswith(f"cleared the render cache at {cache}")
    assert run(capsys, "cache", "info")[1].splitlines()[1].startswith("0 files")


def test_roofline_help_documents_the_kernel_syntax(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["roofline", "--help"]) == 0
    out = capsys.readouterr().out
    for form in ("[LABEL=]KIND:SHAPE[:DTYPE]", "gemm:MxNxK", "add:N", "softmax:RxC", "layernorm:RxC",
                 "attention:BxHxSxD", "attention-naive:BxHxSxD", "2**31"):
        assert form in out


# --- the installed entry point, as a user runs it ---------------------------------------------


def test_installed_command_prints_palm_mfu() -> None:
    completed = subprocess.run([str(AINOTES), "--presets-dir", str(PRESETS_DIR), *PALM_FLAGS],
                               capture_output=True, text=True, timeout=120, check=False)
    assert completed.returncode == 0, completed.stderr
    assert completed.stdout.splitlines()[0] == "MFU: 46.2 %"


def test_installed_command_bad_input_is_one_line_exit_2(tmp_path: Path) -> None:
    output = tmp_path / "r.svg"
    completed = subprocess.run(
        [str(AINOTES), "--presets-dir", str(PRESETS_DIR), "roofline", "--kernel", "gemm:4x4", "-o", str(output)],
        capture_output=True, text=True, timeout=120, check=False,
    )
    assert completed.returncode == 2
    assert completed.stdout == ""
    assert completed.stderr.splitlines() == [
        "ainotes roofline: --kernel: kernel spec 'gemm:4x4': gemm takes 3 dimensions MxNxK, got 2: '4x4'"
    ]
    assert not output.exists()


# --- site-assets ------------------------------------------------------------------------


def test_site_assets_refuses_a_missing_site_or_config(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    status, out, err = run(capsys, "site-assets", "--config", str(tmp_path / "mkdocs.yml"), str(tmp_path))
    assert_one_line_error(status, out, err, "site-assets", f"{tmp_path / 'mkdocs.yml'}: cannot read the file")
    status, out, err = run(capsys, "site-assets", str(tmp_path / "no-site"))
    assert_one_line_error(status, out, err, "site-assets", "no-site: no such folder; build the site first")


def test_site_assets_writes_what_the_hooks_write(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "index.md").write_text("# Home\n\n> ```collective\n> op: reduce\n> ```\n", encoding="utf-8")
    (tmp_path / "mkdocs.yml").write_text(
        "site_name: x\nmarkdown_extensions:\n  - pymdownx.superfences\n  - ainotes.markdown\n", encoding="utf-8"
    )
    shutil.copytree(PRESETS_DIR, tmp_path / "presets")
    (tmp_path / "site").mkdir()
    status, out, _ = run(capsys, "site-assets", "--config", str(tmp_path / "mkdocs.yml"), str(tmp_path / "site"))
    assert status == 0, out
    manifest = json.loads((tmp_path / "site" / "embed" / "manifest.json").read_text(encoding="utf-8"))
    assert [(c["id"], c["page"]) for c in manifest["charts"]] == [("index-reduce", "")]
    assert (tmp_path / "site" / "assets" / "ainotes" / "collectives.js").is_file()
