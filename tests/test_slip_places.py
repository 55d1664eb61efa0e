"""Author slips of issue 30 told at the place to fix, with what was likely meant: a tensor-parallel degree a
model cannot take, at the fence's 'tp' line and naming the model the fence names; a misspelt key, unit or
precision in a GPU preset, with the nearest one; a model file left among the GPU presets, with the folder
the build reads it from."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from ainotes.base.errors import InputError
from ainotes.build.site import NotesSite
from ainotes.cli import main
from ainotes.markdown.extension import convert_page
from ainotes.presets.gpus import load_preset, load_presets
from preset_support import FIXTURE_PRESETS

INFERENCE = Path(__file__).parent / "fixtures" / "inference"  # lab-70b: 64 heads; lab-13b: 40; lab-moe: 32
H100 = (FIXTURE_PRESETS / "h100.yaml").read_text(encoding="utf-8")


@pytest.fixture(scope="module")
def site() -> NotesSite:
    return NotesSite(INFERENCE)


@pytest.mark.parametrize(("body", "expected"), [
    # Every model of the select must take the tp; the message names the one the fence names.
    ("model: lab-70b\nlink: lab-link\ntp: 3\n",
     "serve.md:8: 'tp' 3 does not divide the 64 attention heads of lab-70b: tensor parallelism gives each chip "
     "whole heads"),
    ("models: [lab-moe, lab-13b]\nmodel: lab-13b\nlink: lab-link\ntp: 16\n",
     "serve.md:9: 'tp' 16 does not divide the 40 attention heads of lab-13b"),
])
def test_an_inference_fence_names_its_own_model_at_the_tp_line(site: NotesSite, body: str, expected: str) -> None:
    with pytest.raises(InputError) as caught:
        convert_page(site, f"# Serve\n\nWords.\n\n```inference\n{body}```\n", "serve.md", "serve/")
    assert str(caught.value).startswith(expected), caught.value


def test_an_inference_table_says_a_tp_at_its_line_whatever_the_gpu(site: NotesSite) -> None:
    page = "# Serve\n\n```inference-table\nmodels: [lab-70b]\npresets: [lab-gpu]\nlink: lab-link\ntp: 3\n```\n"
    with pytest.raises(InputError) as caught:
        convert_page(site, page, "serve.md", "serve/")
    assert str(caught.value) == ("serve.md:7: 'tp' 3 does not divide the 64 attention heads of lab-70b: tensor "
                                 "parallelism gives each chip whole heads")


@pytest.mark.parametrize(("old", "new", "expected"), [
    ("    tf32: {", "    tf23: {", "unknown precision 'peaks.tensor.tf23' (did you mean 'tf32'?); tensor precisions:"),
    ("  tensor:", "  tensr:", "unknown unit 'peaks.tensr' (did you mean 'tensor'?); units: tensor, vector"),
    ("    fp16: {dense_tflops: 989.4, sparse_tflops:", "    fp16: {dense_tflops: 989.4, sparse_tflop:",
     "unknown key 'peaks.tensor.fp16.sparse_tflop' (did you mean 'sparse_tflops'?); allowed keys:"),
    ("memory_bandwidth_tbps:", "memory_bandwith_tbps:",
     "unknown key 'memory_bandwith_tbps' (did you mean 'memory_bandwidth_tbps'?)"),
])
def test_a_misspelt_preset_key_gets_the_nearest(tmp_path: Path, old: str, new: str, expected: str) -> None:
    assert old in H100
    path = tmp_path / "h100.yaml"
    path.write_text(H100.replace(old, new, 1), encoding="utf-8")
    with pytest.raises(InputError) as caught:
        load_preset(path)
    line = next(n for n, text_line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1) if new in text_line)
    assert str(caught.value).startswith(f"{path}:{line}: {expected}"), caught.value


def test_a_model_file_among_the_gpu_presets_is_told_where_it_goes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    shutil.copy(FIXTURE_PRESETS / "h100.yaml", tmp_path / "h100.yaml")
    shutil.copy(INFERENCE / "models" / "lab-70b.yaml", tmp_path / "lab-70b.yaml")
    expected = (f"{tmp_path / 'lab-70b.yaml'}:3: a model file ('layers', 'd_model'), not a GPU preset: the build reads "
                f"model files from a models/ folder beside the GPU presets; move it to {tmp_path / 'models'}/")
    with pytest.raises(InputError, match="a model file"):
        load_presets(tmp_path)  # what a build meets
    assert main(["validate", str(tmp_path)]) == 2
    out, err = capsys.readouterr()
    assert err == f"ainotes validate: {expected}\n" and "1 OK, 1 with errors" in out


@pytest.mark.parametrize(("text", "expected"), [
    ("# C\n\n```collective-cost\nop: all-reduce\nrank: 8\n```\n",
     "c.md:5: unknown key 'rank' in collective-cost fence (allowed: op, ranks, link, title, id, measured): did you "
     "mean 'ranks'?"),
    ("{{ collective-time all-reduce rank=8 bytes=1e9 link=nvlink-4 }}\n", "c.md:1: 'collective-time' does not take "
     "rank= (allowed: algorithm, bytes, link, micro_batch, model, part, pp, ranks, seq_len, tp): did you mean ranks=?"),
    ("{{ collective-time allreduce ranks=8 bytes=1e9 link=nvlink-4 }}\n", "c.md:1: 'collective-time' needs one op "
     "(all-reduce, reduce, reduce-scatter, all-gather, broadcast, scatter, all-to-all): 'allreduce': did you mean "
     "all-reduce?"),
    ("# C\n\n```collective-cost\nop: allreduce\n```\n", "c.md:4: 'op' must be one of all-reduce, reduce, "
     "reduce-scatter, all-gather, broadcast, scatter, all-to-all: 'allreduce': did you mean 'all-reduce'?"),
    ("{{ bus-factor all-reduce rank=8 }}\n", "c.md:1: 'bus-factor' does not take rank= (allowed: ranks=): did you "
     "mean ranks=?"),
    ("{{ peak h100 tf23 }}\n", "c.md:1: 'peak' does not take 'tf23' (allowed: a precision, fp64, fp32, tf32, fp16, "
     "bf16, fp8, fp4, int8; a unit, tensor, vector; sparse): did you mean 'tf32'?"),
])
def test_a_misspelt_key_word_or_op_on_a_page_gets_the_nearest(text: str, expected: str) -> None:
    with pytest.raises(InputError) as caught:
        convert_page(NotesSite(FIXTURE_PRESETS), text, "c.md", "c/")
    assert str(caught.value) == expected


def test_a_misspelt_inline_figure_gets_the_nearest() -> None:
    with pytest.raises(InputError) as caught:
        convert_page(NotesSite(FIXTURE_PRESETS), "{{ colective-time all-reduce ranks=8 bytes=1e9 link=nvlink-4 }}\n",
                     "c.md", "c/")
    message = str(caught.value)
    assert message.startswith("c.md:1: unknown inline figure 'colective-time' (known: ")
    assert message.endswith(": did you mean 'collective-time'?")
