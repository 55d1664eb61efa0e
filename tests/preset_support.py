"""Which GPU presets a test sees.

Tests never depend on which presets ship in ``presets/``:

* a test that needs fixed figures (the H100's 989.4 TFLOP/s, the B200's derivation) reads
  :data:`FIXTURE_PRESETS`, copies of the four NVIDIA files as they were published, with the
  eight interconnects as first published beside them (``links/``, a copy: adding a link preset
  changes no fixture);
* a test over "every shipped preset" iterates :func:`shipped_ids` / :data:`SHIPPED_PRESETS`;
* a test that needs an id no folder has uses :data:`UNKNOWN_ID`, never a plausible one (an H200,
  an MI325X: the next presets an author adds).

:data:`H200` and :data:`MI325X` are two realistic presets an author would add, from the vendors'
data sheets, under ids the shipped folder does not use; :func:`presets_with_additions` puts them
beside the shipped ones. :data:`MI300X` is the AMD part as an author first typed it (no node), for
tests that load it alone.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

from ainotes.presets.gpus import PRESET_SUFFIXES

REPO = Path(__file__).resolve().parents[1]
SHIPPED_PRESETS = REPO / "presets"
FIXTURE_PRESETS = Path(__file__).resolve().parent / "fixtures" / "presets"
FIXTURE_IDS = ("b200", "h100", "a100", "rtx-4090")  # the fixture's order: dense rate, highest first
UNKNOWN_ID = "no-such-gpu"


def shipped_ids() -> tuple[str, ...]:
    """The ids of the GPU presets in ``presets/``, by file name."""
    return tuple(sorted(p.stem for p in SHIPPED_PRESETS.iterdir() if p.suffix in PRESET_SUFFIXES))


# NVIDIA H200 SXM: the datasheet prints tensor rates with sparsity (the dense ones are half).
H200 = """\
name: NVIDIA H200 SXM 141 GB
variant: H200 SXM, 141 GB HBM3e
dense_fp16_tflops: 989.4
memory_bandwidth_tbps: 4.8
memory_capacity_gb: 141
structured_sparsity: true
unit_names: {tensor: tensor cores, vector: CUDA cores}
sources:
  - title: NVIDIA H200 Tensor Core GPU datasheet (H200 SXM column)
    url: https://www.nvidia.com/en-us/data-center/h200/
peaks:
  tensor:
    fp64: {dense_tflops: 67, structured_sparsity: false, source: 1}
    tf32: {dense_tflops: 494.7, sparse_tflops: 989.4, source: 1}
    fp16: {dense_tflops: 989.4, sparse_tflops: 1978.9, source: 1}
    bf16: {dense_tflops: 989.4, sparse_tflops: 1978.9, source: 1}
    fp8: {dense_tflops: 1978.9, sparse_tflops: 3957.8, source: 1}
    fp4: none
    int8: {dense_tflops: 1978.9, sparse_tflops: 3957.8, source: 1, note: TOPS (integer operations per second)}
  vector:
    fp32: {dense_tflops: 67, source: 1}
    fp64: {dense_tflops: 34, source: 1}
"""

# AMD Instinct MI300X, from AMD's data sheet: dense and "with structured sparsity" figures.
MI300X = """\
name: AMD Instinct MI300X (192 GB HBM3)
variant: MI300X OAM module, 192 GB HBM3
dense_fp16_tflops: 1307.4
memory_bandwidth_tbps: 5.3
memory_capacity_gb: 192
structured_sparsity: true
unit_names: {tensor: Matrix Cores, vector: stream processors}
sources:
  - title: AMD Instinct MI300X accelerator data sheet
    url: https://www.amd.com/content/dam/amd/en/documents/instinct-tech-docs/data-sheets/amd-instinct-mi300x-data-sheet.pdf
peaks:
  tensor:
    fp64: {dense_tflops: 163.4, structured_sparsity: false, source: 1}
    fp32: {dense_tflops: 163.4, structured_sparsity: false, source: 1, note: FP32 matrix}
    tf32: {dense_tflops: 653.7, sparse_tflops: 1307.4, source: 1}
    fp16: {dense_tflops: 1307.4, sparse_tflops: 2614.9, source: 1}
    bf16: {dense_tflops: 1307.4, sparse_tflops: 2614.9, source: 1}
    fp8: {dense_tflops: 2614.9, sparse_tflops: 5229.8, source: 1}
    int8: {dense_tflops: 2614.9, sparse_tflops: 5229.8, source: 1, note: TOPS (integer operations per second)}
  vector:
    fp32: {dense_tflops: 163.4, source: 1}
    fp64: {dense_tflops: 81.7, source: 1}
"""

# AMD Instinct MI325X, from AMD's data sheet: the MI300X's compute (the same dense and "with structured
# sparsity" rates, so the MI300X's peaks) with 256 GB of HBM3E at 6 TB/s.
MI325X = (MI300X
          .replace("name: AMD Instinct MI300X (192 GB HBM3)", "name: AMD Instinct MI325X (256 GB HBM3E)")
          .replace("variant: MI300X OAM module, 192 GB HBM3", "variant: MI325X OAM module, 256 GB HBM3E")
          .replace("memory_bandwidth_tbps: 5.3", "memory_bandwidth_tbps: 6")
          .replace("memory_capacity_gb: 192", "memory_capacity_gb: 256")
          .replace("title: AMD Instinct MI300X accelerator data sheet",
                   "title: AMD Instinct MI325X accelerator data sheet")
          .replace("url: https://www.amd.com/content/dam/amd/en/documents/instinct-tech-docs/data-sheets/"
                   "amd-instinct-mi300x-data-sheet.pdf",
                   "url: https://www.amd.com/en/products/accelerators/instinct/mi300/mi325x.html"))
assert "MI300X" not in MI325X and "5.3" not in MI325X and "192" not in MI325X

ADDED = {"h200": H200, "mi325x": MI325X}


def presets_with_additions(dest: Path) -> Path:
    """``dest``: a copy of the shipped presets (interconnects included) plus :data:`ADDED`."""
    shutil.copytree(SHIPPED_PRESETS, dest, dirs_exist_ok=True)
    for preset_id, text in ADDED.items():
        (dest / f"{preset_id}.yaml").write_text(text, encoding="utf-8")
    return dest


def names_the_file(message: str, path: str | Path) -> bool:
    """Whether a preset loader's one line opens with the file, and the line of the key it names where the
    file has that key: ``presets/h100.yaml:4: 'dense_fp16_tflops' ...`` or ``presets/h100.yaml: missing ...``."""
    return re.match(rf"{re.escape(str(path))}(:[0-9]+)?: ", message) is not None


def without_line(message: str, path: str | Path) -> str:
    """``message`` with the line after the file dropped: ``h100.yaml:4: 'x' ...`` reads ``h100.yaml: 'x' ...``,
    for a test about the words rather than the place."""
    return re.sub(rf"^({re.escape(str(path))}):[0-9]+: ", r"\1: ", message)
