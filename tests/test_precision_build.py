"""Real MkDocs builds with per-precision presets: a sparse figure typed as dense stops the build in one line."""

from __future__ import annotations

from pathlib import Path

import pytest

from sitebuild import H100, make_fixture, run_build

pytestmark = pytest.mark.build  # whole-site builds: not in make test-fast

H100_PLAIN = H100.format(name="H100 test", source_title="Datasheet", url="https://example.com/h100")
PEAKS = "peaks:\n  tensor:\n    fp8: {dense_tflops: 1978.9, sparse_tflops: 3957.8}\n    fp4: none\n"


def test_a_sparse_figure_typed_as_dense_stops_the_build(tmp_path: Path) -> None:
    typo = H100_PLAIN + "peaks:\n  tensor:\n    fp8: {dense_tflops: 3957.8, sparse_tflops: 3957.8}\n"
    project = make_fixture(tmp_path, {"index.md": "# Home\n\nRidge {{ ridge h100 }}.\n"}, presets={"h100": typo})
    build = run_build(project)
    assert build.returncode != 0
    assert "Traceback" not in build.output
    expected = ("h100.yaml:10: 'peaks.tensor.fp8.sparse_tflops' must be 2 × 'peaks.tensor.fp8.dense_tflops' "
                "(2:4 sparsity doubles the dense rate): sparse 3957.8, dense 3957.8")
    matching = [line for line in build.output.splitlines() if expected in line]
    assert len(matching) == 1, build.output
    assert not (project / "site" / "index.html").exists()


def test_per_precision_forms_build_and_bad_words_name_page_and_line(tmp_path: Path) -> None:
    page = "# Home\n\nFP8 peak {{ peak h100 fp8 }}, ridges {{ ridges fp8 }}.\n"
    project = make_fixture(tmp_path / "good", {"index.md": page}, presets={"h100": H100_PLAIN + PEAKS})
    build = run_build(project)
    assert build.returncode == 0, build.output
    html = build.page("")
    assert "FP8 peak 1.979 PFLOP/s, ridges H100 test at 591 FLOP/byte." in html

    bad = "# Home\n\nText.\n\nFP4 peak {{ peak h100 fp4 }}.\n"
    project = make_fixture(tmp_path / "bad", {"index.md": bad}, presets={"h100": H100_PLAIN + PEAKS})
    build = run_build(project)
    assert build.returncode != 0 and "Traceback" not in build.output
    assert "index.md:5" in build.output and "'peak': preset h100 has no FP4 tensor path" in build.output, build.output

    silent = "# Home\n\n{{ peak h100 int8 }}\n"
    project = make_fixture(tmp_path / "silent", {"index.md": silent}, presets={"h100": H100_PLAIN})
    build = run_build(project)
    assert build.returncode != 0
    assert "index.md:3" in build.output, build.output
    assert "preset h100 does not give its INT8 tensor rate" in build.output, build.output
