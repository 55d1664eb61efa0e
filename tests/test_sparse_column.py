"""The vendor's "with sparsity" column copied as dense, caught from the preset alone: 2:4 sparsity doubles a
part's FP16/BF16 ridge, which then lies past that of every part with 2:4 sparsity (the loader's
``SPARSE_RIDGE_FLOP_PER_BYTE``), with or without ``peaks``, per chip or as system totals. The one line names
the key, the ridge and the dense figure to write; ``confirmed_dense: true`` keeps a part that really runs
that fast, with a warning."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from ainotes.base.errors import InputError
from ainotes.cli import main
from ainotes.presets.gpus import load_preset, load_presets
from preset_support import FIXTURE_PRESETS, H200, MI300X

H100 = (FIXTURE_PRESETS / "h100.yaml").read_text(encoding="utf-8")
B200 = (FIXTURE_PRESETS / "b200.yaml").read_text(encoding="utf-8")
SOURCES = "sources:\n  - title: Data sheet\n    url: https://example.com/sheet\n"


def sparse_column(text: str, *, halved: dict[str, str]) -> str:
    """``text`` with every tensor rate that 2:4 sparsity doubles replaced by its "with sparsity" figure: each
    entry's sparse_tflops becomes its dense_tflops (as a reader copying the wrong column writes it), and each
    figure in ``halved`` (dense → sparse) is replaced where it stands alone."""
    text = re.sub(r"dense_tflops: [0-9.]+, sparse_tflops: ([0-9.]+)", r"dense_tflops: \1", text)
    for dense, sparse in halved.items():
        text = text.replace(dense, sparse)
    return text


def write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / f"{name}.yaml"
    path.write_text(text, encoding="utf-8")
    return path


def without_peaks(text: str) -> str:
    return text[:text.index("\npeaks:")] + "\n" if "\npeaks:" in text else text


CASES = [
    # H100 SXM: 1,978.9 TFLOP/s BF16 with sparsity over 3.35 TB/s, a ridge of 591 FLOP/byte where its dense one is 295.
    ("H100 SXM with peaks", "h100",
     sparse_column(H100, halved={"dense_fp16_tflops: 989.4": "dense_fp16_tflops: 1978.9"}),
     "'dense_fp16_tflops' 1978.9 over 'memory_bandwidth_tbps' 3.35 puts the FP16/BF16 ridge at 591 FLOP/byte, past "
     "the 450 of any part with 2:4 sparsity: it looks like the 'with sparsity' figure; the dense one is half: write "
     "989.45 (and halve each peaks.tensor rate taken from the same column)"),
    ("H100 SXM without peaks, as the datasheet rounds it", "h100",
     without_peaks(H100).replace("dense_fp16_tflops: 989.4", "dense_fp16_tflops: 1979"),
     "'dense_fp16_tflops' 1979 over 'memory_bandwidth_tbps' 3.35 puts the FP16/BF16 ridge at 591 FLOP/byte, past the "
     "450 of any part with 2:4 sparsity: it looks like the 'with sparsity' figure; the dense one is half: write 989.5, "
     "or confirmed_dense: true if the part really runs this fast dense"),
    # MI300X: 2,614.9 with structured sparsity over 5.3 TB/s: 493 FLOP/byte (dense: 247).
    ("MI300X with peaks", "mi300x",
     sparse_column(MI300X, halved={"dense_fp16_tflops: 1307.4": "dense_fp16_tflops: 2614.9"}),
     "puts the FP16/BF16 ridge at 493 FLOP/byte, past the 450 of any part with 2:4 sparsity: it looks like the 'with "
     "sparsity' figure; the dense one is half: write 1307.45"),
    # HGX B200: 36 PFLOP/s with sparsity over 64 TB/s for eight GPUs, 562 FLOP/byte per chip (dense: 281).
    ("HGX B200 system totals", "b200",
     sparse_column(B200, halved={"system_dense_fp16_tflops: 18000": "system_dense_fp16_tflops: 36000"}),
     "'system_dense_fp16_tflops' 36000 over 'system_memory_bandwidth_tbps' 64 puts the FP16/BF16 ridge at 562 "
     "FLOP/byte, past the 450 of any part with 2:4 sparsity: it looks like the 'with sparsity' figure; the dense one "
     "is half: write 18000 (and halve each system_peaks.tensor rate taken from the same column)"),
]


@pytest.mark.parametrize(("case", "name", "text", "expected"), CASES, ids=[c[0] for c in CASES])
def test_the_sparse_column_typed_as_dense_stops_loading_with_the_dense_figure(
    tmp_path: Path, case: str, name: str, text: str, expected: str
) -> None:
    path = write(tmp_path, name, text)
    with pytest.raises(InputError) as caught:
        load_preset(path)
    message = str(caught.value)
    # At the line of the dense figure the file gives.
    line = next(n for n, text_line in enumerate(text.splitlines(), 1)
                if text_line.startswith(("dense_fp16_tflops:", "system_dense_fp16_tflops:")))
    assert message.startswith(f"{path}:{line}: ") and "\n" not in message
    assert expected in message, message


def test_the_command_line_says_it_in_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write(tmp_path, "h100", without_peaks(H100).replace("dense_fp16_tflops: 989.4", "dense_fp16_tflops: 1979"))
    for argv in (["presets"], ["validate", str(tmp_path)]):
        status = main(["--presets-dir", str(tmp_path), *argv])
        err = capsys.readouterr().err
        assert status == 2 and len(err.splitlines()) == 1 and "Traceback" not in err, err
        assert "looks like the 'with sparsity' figure; the dense one is half: write 989.5" in err


def test_a_confirmed_figure_is_kept_with_a_warning(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    text = without_peaks(H100).replace("dense_fp16_tflops: 989.4", "dense_fp16_tflops: 1979\nconfirmed_dense: true")
    write(tmp_path, "edge", text)
    (preset,) = load_presets(tmp_path)
    assert preset.dense_fp16_tflops == 1979
    assert any("ridge at 591 FLOP/byte" in w and "kept, since the file says confirmed_dense: true" in w
               for w in preset.warnings)
    assert "kept, since the file says confirmed_dense: true" in caplog.text


@pytest.mark.parametrize(("case", "figures"), [
    # The highest dense ridge of a part with 2:4 sparsity known here: NVIDIA L40S, BF16 362.05 TFLOP/s dense
    # (733 with sparsity), 864 GB/s: 419 FLOP/byte (NVIDIA L40S datasheet).
    ("L40S", "dense_fp16_tflops: 362.05\nmemory_bandwidth_tbps: 0.864\nstructured_sparsity: true\n"),
    # H100 PCIe: 756 TFLOP/s dense over 2 TB/s HBM2e, 378 FLOP/byte (NVIDIA H100 datasheet, PCIe column).
    ("H100 PCIe", "dense_fp16_tflops: 756\nmemory_bandwidth_tbps: 2.0\nstructured_sparsity: true\n"),
    # A part without 2:4 sparsity may sit further right: Google TPU v6e (Trillium), 918 TFLOP/s BF16 over
    # 1,640 GB/s, 560 FLOP/byte (Google Cloud TPU v6e documentation).
    ("TPU v6e", "dense_fp16_tflops: 918\nmemory_bandwidth_tbps: 1.64\n"),
])
def test_real_dense_figures_load(tmp_path: Path, case: str, figures: str) -> None:
    preset = load_preset(write(tmp_path, "part", f"name: {case}\n{figures}{SOURCES}"))
    assert preset.warnings == ()


def test_every_fixture_preset_loads_as_it_is() -> None:
    assert all(preset.warnings == () for preset in load_presets(FIXTURE_PRESETS))


def test_a_copy_below_the_ridge_is_caught_beside_another_presets_sparse_figure(tmp_path: Path) -> None:
    # H200: 1,978.9 TFLOP/s with sparsity over 4.8 TB/s is 412 FLOP/byte, a ridge real parts have; the H100
    # beside it prints that very figure "with sparsity", which gives the copy away, at the line of the figure.
    shutil.copy(FIXTURE_PRESETS / "h100.yaml", tmp_path / "h100.yaml")
    text = without_peaks(H200).replace("dense_fp16_tflops: 989.4", "dense_fp16_tflops: 1978.9")
    write(tmp_path, "h200", text)
    with pytest.raises(InputError) as caught:
        load_presets(tmp_path)
    assert str(caught.value).startswith(
        f"{tmp_path / 'h200.yaml'}:3: 'dense_fp16_tflops' 1978.9 is {tmp_path / 'h100.yaml'}'s FP16 rate with 2:4 "
        "sparsity (1978.9): the 'with sparsity' column copied as dense? Give the dense rate (989.45 if so)")
