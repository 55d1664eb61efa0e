"""GPU presets: the shipped figures, the B200 derivation, and every kind of bad preset file."""

from __future__ import annotations

import dataclasses
import math
from pathlib import Path

import jsonschema
import pytest
import yaml
from hypothesis import given
from hypothesis import strategies as st

from ainotes.errors import InputError
from ainotes.hardware import (
    Preset,
    Source,
    default_presets_dir,
    load_preset,
    load_presets,
    preset_by_id,
    preset_schema,
    validate_paths,
)
from preset_support import FIXTURE_IDS, FIXTURE_PRESETS, SHIPPED_PRESETS, UNKNOWN_ID, shipped_ids

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
    with pytest.raises(InputError, match=rf"unknown preset '{UNKNOWN_ID}'; known presets: a100, b200, h100, rtx-4090$"):
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
     "'memory_bandwidth_tbps' must be > 0: -3.0"),
    ("zero", _replace("dense_fp16_tflops: 100", "dense_fp16_tflops: 0"), "'dense_fp16_tflops' must be > 0: 0"),
    ("nan", _replace("dense_fp16_tflops: 100", "dense_fp16_tflops: .nan"),
     "'dense_fp16_tflops' must be a finite number: nan"),
    ("infinity", _replace("memory_bandwidth_tbps: 2", "memory_bandwidth_tbps: .inf"),
     "'memory_bandwidth_tbps' must be a finite number: inf"),
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
    ("yaml error", "name: [unclosed\ndense_fp16_tflops: 1\n", "line 2: YAML does not parse"),
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
    assert message.startswith(f"{path}: "), message
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
    assert outcome["bad.yaml"][1] == f"{tmp_path / 'bad.yaml'}: 'memory_bandwidth_tbps' must be > 0: -1"
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
