"""GPU presets: the shipped figures, the B200 derivation, and every kind of bad preset file."""

from __future__ import annotations

import dataclasses
import math
import re
from pathlib import Path

import jsonschema
import pytest
import yaml
from hypothesis import given
from hypothesis import strategies as st

from ainotes.base.errors import InputError
from ainotes.core.hardware import Preset, Source, preset_by_id
from ainotes.presets.gpus import default_presets_dir, load_preset, load_presets, preset_schema, validate_paths
from preset_support import (
    ADDED,
    FIXTURE_IDS,
    FIXTURE_PRESETS,
    H200,
    MI300X,
    SHIPPED_PRESETS,
    UNKNOWN_ID,
    names_the_file,
    shipped_ids,
    without_line,
)

PRESETS_DIR = FIXTURE_PRESETS  # fixed figures: the four NVIDIA files as published, whatever ships

GOOD_SOURCES = "sources:\n  - title: Vendor table\n    url: https://example.com/spec\n"
GOOD_PER_GPU = "name: Test GPU\ndense_fp16_tflops: 100\nmemory_bandwidth_tbps: 2\n" + GOOD_SOURCES


def write_preset(folder: Path, filename: str, text: str) -> Path:
    path = folder / filename
    path.write_text(text, encoding="utf-8")
    return path


# --- the published figures (fixture copies) and every shipped preset ---------------------


def test_presets_are_ordered_by_dense_rate() -> None:
    assert [p.id for p in load_presets(PRESETS_DIR)] == list(FIXTURE_IDS)
    shipped = load_presets(SHIPPED_PRESETS)
    assert sorted(p.id for p in shipped) == list(shipped_ids())
    assert [p.dense_fp16_tflops for p in shipped] == sorted((p.dense_fp16_tflops for p in shipped), reverse=True)


@pytest.mark.parametrize(
    ("preset_id", "dense_tflops", "bandwidth_tbps"),
    [
        ("h100", 989.4, 3.35),  # H100 SXM5 whitepaper / datasheet
        ("a100", 312.0, 2.039),  # A100 80GB SXM datasheet
        ("rtx-4090", 165.2, 1.008),  # Ada architecture whitepaper
        ("b200", 2250.0, 8.0),  # HGX B200 totals ÷ 8
    ],
)
def test_shipped_per_gpu_figures_match_the_vendor_tables(
    preset_id: str, dense_tflops: float, bandwidth_tbps: float
) -> None:
    preset = preset_by_id(load_presets(PRESETS_DIR), preset_id)
    assert preset.dense_fp16_tflops == pytest.approx(dense_tflops, rel=1e-12)
    assert preset.memory_bandwidth_tbps == pytest.approx(bandwidth_tbps, rel=1e-12)
    assert preset.structured_sparsity is True
    assert preset.sources and all(s.url.startswith("https://") for s in preset.sources)


def test_b200_per_gpu_figures_are_derived_from_eight_gpu_totals() -> None:
    b200 = preset_by_id(load_presets(PRESETS_DIR), "b200")
    assert b200.gpu_count == 8
    assert b200.system_dense_fp16_tflops == 18000
    assert b200.system_memory_bandwidth_tbps == 64
    assert b200.peak_flops_per_s() == pytest.approx(2.25e15)
    assert b200.memory_bandwidth_bytes_per_s == pytest.approx(8e12)
    assert b200.derivation == ("NVIDIA HGX B200 totals ÷ 8 GPUs: 18 PFLOP/s → 2.25 PFLOP/s; 64 TB/s → 8 TB/s; "
                               "1440 GB → 180 GB")


def test_presets_stated_per_gpu_have_no_derivation() -> None:
    assert [p.id for p in load_presets(PRESETS_DIR) if p.derivation is None] == ["h100", "a100", "rtx-4090"]


def test_published_ridge_points() -> None:
    presets = {p.id: p for p in load_presets(PRESETS_DIR)}
    assert presets["h100"].ridge_flop_per_byte() == pytest.approx(295.34, abs=0.01)  # 989.4e12 / 3.35e12
    assert presets["b200"].ridge_flop_per_byte() == pytest.approx(281.25)  # 2.25e15 / 8e12
    assert presets["a100"].ridge_flop_per_byte() == pytest.approx(153.02, abs=0.01)
    assert presets["h100"].ridge_flop_per_byte(sparsity=True) == pytest.approx(590.69, abs=0.01)


def test_names_state_the_exact_variant() -> None:
    names = {p.id: p.name for p in load_presets(PRESETS_DIR)}
    assert "SXM5 80 GB" in names["h100"]
    assert "80GB SXM" in names["a100"]
    assert "24 GB" in names["rtx-4090"]
    assert "HGX B200" in names["b200"]


def test_each_shipped_file_satisfies_the_shipped_schema() -> None:
    schema = preset_schema()
    for path in sorted([*SHIPPED_PRESETS.glob("*.yaml"), *PRESETS_DIR.glob("*.yaml")]):
        jsonschema.validate(yaml.safe_load(path.read_text(encoding="utf-8")), schema)


def test_preset_schema_returns_a_fresh_copy() -> None:
    schema = preset_schema()
    assert schema["$schema"].endswith("2020-12/schema")
    schema["properties"].clear()
    assert "name" in preset_schema()["properties"]


def test_presets_are_frozen() -> None:
    preset = load_presets(PRESETS_DIR)[0]
    with pytest.raises(dataclasses.FrozenInstanceError):
        preset.dense_fp16_tflops = 1.0  # type: ignore[misc]


def test_default_presets_dir_follows_the_environment(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv("AINOTES_PRESETS_DIR", raising=False)
    assert default_presets_dir() == Path("presets")
    monkeypatch.setenv("AINOTES_PRESETS_DIR", str(tmp_path))
    assert default_presets_dir() == tmp_path


def test_unknown_preset_id_lists_the_known_ones() -> None:
    with pytest.raises(InputError, match=rf"unknown preset '{UNKNOWN_ID}' \(known: a100, b200, h100, rtx-4090\)$"):
        preset_by_id(load_presets(PRESETS_DIR), UNKNOWN_ID)


def test_exponent_numbers_read_as_numbers(tmp_path: Path) -> None:
    # PyYAML (YAML 1.1) would read 1e3 as a string; preset authors mean a number.
    path = write_preset(tmp_path, "x.yaml", GOOD_PER_GPU.replace("dense_fp16_tflops: 100", "dense_fp16_tflops: 1e3"))
    assert load_preset(path).dense_fp16_tflops == 1000.0


def test_optional_documented_keys_load(tmp_path: Path) -> None:
    text = GOOD_PER_GPU + "variant: SXM, 80 GB\nnotes: |\n  two\n  lines\nstructured_sparsity: false\n"
    preset = load_preset(write_preset(tmp_path, "x-1.yml", text))
    assert (preset.id, preset.variant, preset.structured_sparsity) == ("x-1", "SXM, 80 GB", False)
    assert preset.sources == (Source("Vendor table", "https://example.com/spec"),)


def test_system_totals_without_a_system_name(tmp_path: Path) -> None:
    text = "name: Box\ngpu_count: 4\nsystem_dense_fp16_tflops: 1000\nsystem_memory_bandwidth_tbps: 10\n" + GOOD_SOURCES
    preset = load_preset(write_preset(tmp_path, "box.yaml", text))
    assert (preset.dense_fp16_tflops, preset.memory_bandwidth_tbps) == (250.0, 2.5)
    assert preset.derivation == "System totals ÷ 4 GPUs: 1 PFLOP/s → 250 TFLOP/s; 10 TB/s → 2.5 TB/s"


# --- bad preset files: one line naming the file and the key, the rule and the value ----------------


def _replace(old: str, new: str) -> str:
    assert old in GOOD_PER_GPU
    return GOOD_PER_GPU.replace(old, new)


BAD_FILES = [
    ("negative", _replace("memory_bandwidth_tbps: 2", "memory_bandwidth_tbps: -3.0"),
     "'memory_bandwidth_tbps' must be a finite number > 0: -3.0"),
    ("zero", _replace("dense_fp16_tflops: 100", "dense_fp16_tflops: 0"),
     "'dense_fp16_tflops' must be a finite number > 0: 0"),
    ("nan", _replace("dense_fp16_tflops: 100", "dense_fp16_tflops: .nan"),
     "'dense_fp16_tflops' must be a finite number > 0: nan"),
    ("infinity", _replace("memory_bandwidth_tbps: 2", "memory_bandwidth_tbps: .inf"),
     "'memory_bandwidth_tbps' must be a finite number > 0: inf"),
    ("boolean", _replace("dense_fp16_tflops: 100", "dense_fp16_tflops: true"),
     "'dense_fp16_tflops' must be a number, not a boolean: True"),
    ("string", _replace("dense_fp16_tflops: 100", "dense_fp16_tflops: fast"),
     "'dense_fp16_tflops' must be a number, not a string: 'fast'"),
    ("unknown key", GOOD_PER_GPU + "colour: green\n", "unknown key 'colour'"),
    ("missing key", _replace("memory_bandwidth_tbps: 2\n", ""), "missing required key 'memory_bandwidth_tbps'"),
    ("missing name", _replace("name: Test GPU\n", ""), "missing required key 'name'"),
    ("empty name", _replace("name: Test GPU", "name: ''"), "'name' must not be empty: ''"),
    ("empty sources", _replace(GOOD_SOURCES, "sources: []\n"), "'sources' must name at least one source: []"),
    ("javascript url", _replace("https://example.com/spec", "javascript:alert(1)"),
     "'sources[0].url' must be an http or https URL: 'javascript:alert(1)'"),
    ("ftp url", _replace("https://example.com/spec", "ftp://example.com/spec"),
     "'sources[0].url' must be an http or https URL: 'ftp://example.com/spec'"),
    ("url without host", _replace("https://example.com/spec", "'https://'"),
     "'sources[0].url' must be a full http(s) URL with a host and no spaces: 'https://'"),
    ("source without url", _replace("    url: https://example.com/spec\n", ""),
     "missing required key 'sources[0].url'"),
    ("not a mapping", "- one\n- two\n", "must be a mapping of keys to values, not a list"),
    ("empty file", "", "the file is empty"),
    ("yaml error", "name: [unclosed\ndense_fp16_tflops: 1\n", "line 1: YAML does not parse"),
    ("duplicate key", GOOD_PER_GPU + "name: Again\n", "line 7: duplicate key 'name'"),
    ("sparsity not boolean", GOOD_PER_GPU + "structured_sparsity: 2\n",
     "'structured_sparsity' must be true or false: 2"),
    ("both forms", GOOD_PER_GPU + "gpu_count: 8\n", "'dense_fp16_tflops' cannot be combined with system totals"),
    ("fractional gpu count",
     "name: Box\ngpu_count: 8.5\nsystem_dense_fp16_tflops: 1\nsystem_memory_bandwidth_tbps: 1\n" + GOOD_SOURCES,
     "'gpu_count' must be a whole number: 8.5"),
    ("zero gpu count",
     "name: Box\ngpu_count: 0\nsystem_dense_fp16_tflops: 1\nsystem_memory_bandwidth_tbps: 1\n" + GOOD_SOURCES,
     "'gpu_count' must be >= 1: 0"),
    ("system total missing", "name: Box\ngpu_count: 8\nsystem_dense_fp16_tflops: 1\n" + GOOD_SOURCES,
     "missing required key 'system_memory_bandwidth_tbps'"),
]


@pytest.mark.parametrize(("case", "text", "expected"), BAD_FILES, ids=[case for case, _, _ in BAD_FILES])
def test_bad_preset_file_is_one_line_naming_file_key_rule_and_value(
    tmp_path: Path, case: str, text: str, expected: str
) -> None:
    path = write_preset(tmp_path, "gpu.yaml", text)
    with pytest.raises(InputError) as caught:
        load_presets(tmp_path)
    message = str(caught.value)
    assert names_the_file(message, path), message
    assert expected in message
    assert "\n" not in message


def test_file_name_must_be_a_preset_id(tmp_path: Path) -> None:
    write_preset(tmp_path, "H100_SXM.yaml", GOOD_PER_GPU)
    with pytest.raises(InputError, match=r"H100_SXM\.yaml: the file name must be a preset id .*: 'H100_SXM'$"):
        load_presets(tmp_path)


def test_duplicate_ids_across_yaml_and_yml_are_refused(tmp_path: Path) -> None:
    write_preset(tmp_path, "h100.yaml", GOOD_PER_GPU)
    write_preset(tmp_path, "h100.yml", GOOD_PER_GPU)
    with pytest.raises(InputError) as caught:
        load_presets(tmp_path)
    expected = f"{tmp_path / 'h100.yml'}: duplicate preset id 'h100': {tmp_path / 'h100.yaml'} has the same id"
    assert str(caught.value) == expected


def test_missing_folder(tmp_path: Path) -> None:
    with pytest.raises(InputError, match=r"nowhere: presets folder does not exist$"):
        load_presets(tmp_path / "nowhere")


def test_empty_folder(tmp_path: Path) -> None:
    write_preset(tmp_path, "README.md", "not a preset")
    with pytest.raises(InputError, match=r"presets folder holds no preset files \(\*\.yaml, \*\.yml\)$"):
        load_presets(tmp_path)


def test_not_utf8(tmp_path: Path) -> None:
    (tmp_path / "gpu.yaml").write_bytes(b"name: \xff\xfe\n")
    with pytest.raises(InputError, match=r"gpu\.yaml: the file is not UTF-8 text$"):
        load_presets(tmp_path)


def test_validate_paths_reports_every_file(tmp_path: Path) -> None:
    write_preset(tmp_path, "good.yaml", GOOD_PER_GPU)
    write_preset(tmp_path, "bad.yaml", _replace("memory_bandwidth_tbps: 2", "memory_bandwidth_tbps: -1"))
    write_preset(tmp_path, "good.yml", GOOD_PER_GPU)
    checks = validate_paths([tmp_path, tmp_path / "absent.yaml"])
    outcome = {Path(c.path).name: (c.ok, c.error) for c in checks}
    assert outcome["good.yaml"] == (True, None)
    assert without_line(outcome["bad.yaml"][1], tmp_path / "bad.yaml") == (
        f"{tmp_path / 'bad.yaml'}: 'memory_bandwidth_tbps' must be a finite number > 0: -1")
    assert "duplicate preset id 'good'" in outcome["good.yml"][1]
    assert outcome["absent.yaml"][1] == f"{tmp_path / 'absent.yaml'}: no such file or folder"


# --- properties --------------------------------------------------------------------------


positive = st.floats(min_value=1e-3, max_value=1e6, allow_nan=False, allow_infinity=False)


@given(dense=positive, bandwidth=positive, supported=st.booleans())
def test_sparse_ridge_is_twice_dense_exactly_when_supported(dense: float, bandwidth: float, supported: bool) -> None:
    preset = Preset(
        id="p", name="P", dense_fp16_tflops=dense, memory_bandwidth_tbps=bandwidth,
        structured_sparsity=supported, sources=(Source("t", "https://example.com"),), path="p.yaml",
    )
    ratio = preset.ridge_flop_per_byte(sparsity=True) / preset.ridge_flop_per_byte()
    assert ratio == pytest.approx(2.0 if supported else 1.0)
    # Sparsity never touches bandwidth.
    assert preset.memory_bandwidth_bytes_per_s == pytest.approx(bandwidth * 1e12)


@pytest.mark.parametrize("bad", [0.0, -1.0, math.nan, math.inf])
def test_preset_objects_refuse_impossible_figures(bad: float) -> None:
    with pytest.raises(InputError, match="'dense_fp16_tflops'"):
        Preset(id="p", name="P", dense_fp16_tflops=bad, memory_bandwidth_tbps=1.0, structured_sparsity=False,
               sources=(), path="p.yaml")


# --- plausibility: figures no accelerator has stop loading, naming the likely slip -------------------

FP8_LINE = "    fp8: {dense_tflops: 2614.9, sparse_tflops: 5229.8, source: 1}\n"
TF32_LINE = "    tf32: {dense_tflops: 653.7, sparse_tflops: 1307.4, source: 1}\n"
B200_FP4 = "    fp4: {dense_tflops: 72000, sparse_tflops: 144000, source: 1}\n"

SLIPS = [
    ("GB/s typed as TB/s", MI300X, "memory_bandwidth_tbps: 5.3", "memory_bandwidth_tbps: 5300",
     "'memory_bandwidth_tbps' 5300 is outside 0.05-100 TB/s per chip, where every accelerator's memory lies: "
     "GB/s typed as TB/s? (5300 GB/s = 5.3 TB/s)"),
    ("PB/s typed as TB/s", MI300X, "memory_bandwidth_tbps: 5.3", "memory_bandwidth_tbps: 0.0053",
     "PB/s typed as TB/s? (0.0053 PB/s = 5.3 TB/s)"),
    ("a system total in GB/s", None, "system_memory_bandwidth_tbps: 64", "system_memory_bandwidth_tbps: 64000",
     "'system_memory_bandwidth_tbps' 64000 is outside 0.05-100 TB/s per chip (8 GPUs share the total: is "
     "'gpu_count' right?), where every accelerator's memory lies: GB/s typed as TB/s? (8000 GB/s = 8 TB/s)"),
    ("GFLOP/s typed as TFLOP/s", "name: X\ndense_fp16_tflops: 989400\nmemory_bandwidth_tbps: 4.8\n" + GOOD_SOURCES,
     None, None,
     "'dense_fp16_tflops' 989400 is above 100,000 TFLOP/s per chip, more than any chip's dense rate: "
     "GFLOP/s typed as TFLOP/s? (989400 GFLOP/s = 989.4 TFLOP/s)"),
    ("a ridge below 1 FLOP/byte", "name: X\ndense_fp16_tflops: 1.3074\nmemory_bandwidth_tbps: 5.3\n" + GOOD_SOURCES,
     None, None,
     "'dense_fp16_tflops' 1.3074 over 'memory_bandwidth_tbps' 5.3 puts the FP16/BF16 ridge at 0.247 FLOP/byte, "
     "below 1, where no accelerator's lies: is 'dense_fp16_tflops' in PFLOP/s (1.3074 PFLOP/s = 1307.4 TFLOP/s)?"),
    ("FP8's sparse figure typed as dense", MI300X, FP8_LINE, "    fp8: {dense_tflops: 5229.8}\n",
     "'peaks.tensor.fp8' 5229.8 is twice what its neighbours predict (2614.8, twice the FP16/BF16 rate), as a 2:4 "
     "sparse figure is: the sparse figure typed as dense?"),
    ("TF32's sparse figure typed as dense", MI300X, TF32_LINE, "    tf32: 1307.4\n",
     "'peaks.tensor.tf32' 1307.4 is twice what its neighbours predict (653.7, half the FP16/BF16 rate)"),
    ("INT8's sparse figure typed as dense", H200, "int8: {dense_tflops: 1978.9, sparse_tflops: 3957.8, ",
     "int8: {dense_tflops: 3957.8, ",
     "'peaks.tensor.int8' 3957.8 is twice what its neighbours predict (1978.9, the FP8 rate)"),
    ("FP4's sparse total typed as dense", None, B200_FP4, "    fp4: 144000\n",
     "'system_peaks.tensor.fp4' 144000 is twice what its neighbours predict (72000, twice the FP8 rate)"),
]


@pytest.mark.parametrize(("case", "text", "old", "new", "expected"), SLIPS, ids=[s[0] for s in SLIPS])
def test_an_implausible_figure_stops_loading_with_the_likely_slip(
    tmp_path: Path, case: str, text: str | None, old: str | None, new: str | None, expected: str
) -> None:
    text = text if text is not None else (FIXTURE_PRESETS / "b200.yaml").read_text(encoding="utf-8")
    if old is not None:
        assert old in text, case
        text = text.replace(old, new)
    path = write_preset(tmp_path, "gpu.yaml", text)
    with pytest.raises(InputError) as caught:
        load_preset(path)
    message = str(caught.value)
    assert names_the_file(message, path) and "\n" not in message
    assert expected in message, message


def test_the_cli_refuses_the_slip_in_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from ainotes.cli import main

    write_preset(tmp_path, "mi300x.yaml", MI300X.replace(FP8_LINE, "    fp8: {dense_tflops: 5229.8}\n"))
    for argv in (["presets"], ["validate", str(tmp_path)], ["kernel", "gemm:64x64x64:fp8"]):
        status = main(["--presets-dir", str(tmp_path), *argv])
        err = capsys.readouterr().err
        assert status == 2 and len(err.splitlines()) == 1, err
        assert f"{tmp_path / 'mi300x.yaml'}:18: 'peaks.tensor.fp8' 5229.8 is twice" in err  # the fp8 line


def test_confirmed_dense_keeps_the_figure_and_warns(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    # A card whose FP16 figure is its half-rate FP32-accumulate one prints INT8 at 4 × FP16 and 2 × FP8.
    text = ("name: Card\ndense_fp16_tflops: 165.2\nmemory_bandwidth_tbps: 1.008\n" + GOOD_SOURCES
            + "peaks:\n  tensor:\n    fp8: 330.3\n    int8: {dense_tflops: 660.6, confirmed_dense: true}\n")
    path = write_preset(tmp_path, "card.yaml", text)
    with caplog.at_level("WARNING", logger="ainotes.core.hardware"):
        preset = load_preset(path)
        assert caplog.messages == []  # one file on its own (a page's example) is not a build's warning
        (loaded,) = load_presets(tmp_path)
        assert validate_paths([path])[0].ok
    assert preset.peak_tflops("int8") == 660.6
    (warning,) = preset.warnings
    assert without_line(warning, path) == (
        f"{path}: 'peaks.tensor.int8' 660.6 is twice what its neighbours predict (330.3, the FP8 rate), "
        "as a 2:4 sparse figure is; kept, since the file says confirmed_dense: true")
    assert loaded.warnings == (warning,)
    assert caplog.messages == [warning, warning]  # loading the folder, then validating the file
    with pytest.raises(InputError, match=r"'peaks.tensor.int8' 660.6 is twice"):
        load_preset(write_preset(tmp_path, "card.yaml", text.replace(", confirmed_dense: true", "")))


@pytest.mark.parametrize(
    ("entry", "expected"),
    [
        ("  vector:\n    fp32: {dense_tflops: 50, confirmed_dense: true}\n",
         "'peaks.vector.fp32.confirmed_dense' must be true or false, on a tensor rate"),
        ("  tensor:\n    fp8: {dense_tflops: 200, confirmed_dense: yes please}\n",
         "'peaks.tensor.fp8.confirmed_dense' must be true or false"),
    ],
)
def test_confirmed_dense_is_a_tensor_entrys_boolean(tmp_path: Path, entry: str, expected: str) -> None:
    with pytest.raises(InputError, match=re.escape(expected)):
        load_preset(write_preset(tmp_path, "gpu.yaml", GOOD_PER_GPU + "peaks:\n" + entry))


@pytest.mark.parametrize("folder", [SHIPPED_PRESETS, FIXTURE_PRESETS], ids=["shipped", "published"])
def test_no_false_alarm_on_real_parts(folder: Path, tmp_path: Path) -> None:
    presets = [*load_presets(folder)]
    for preset_id, text in ADDED.items():
        presets.append(load_preset(write_preset(tmp_path, f"{preset_id}.yaml", text)))
    assert [(p.id, p.warnings) for p in presets if p.warnings] == []
    assert set(ADDED) <= {p.id for p in presets}


def test_a_page_names_a_preset_file_by_its_folder_and_name_only() -> None:
    # Builders load presets/ by absolute path (MkDocs' hooks) or relative to the project (ProperDocs'
    # working folder); what a page says must be the same, and hold nothing of the machine's folders.
    absolute = preset_by_id(load_presets(FIXTURE_PRESETS.resolve()), "h100")
    assert absolute.file == str(FIXTURE_PRESETS.resolve() / "h100.yaml")
    assert absolute.file_label == "presets/h100.yaml"
    bare = Preset(id="x", name="X", dense_fp16_tflops=1, memory_bandwidth_tbps=1, structured_sparsity=False,
                  sources=())
    assert bare.file_label == "x"
