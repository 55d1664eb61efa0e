"""A build whose charts render in worker processes is byte-identical to one that renders
them all in the build's own process (``AINOTES_RENDER_WORKERS=0``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from sitebuild import copy_real_project, run_build
from test_reproducible import MKDOCS_DATED, _files, _first_difference

pytestmark = pytest.mark.build  # whole-site builds: not in make test-fast


@pytest.fixture(scope="module")
def serial_and_parallel(tmp_path_factory) -> tuple[Path, Path]:
    runtime = tmp_path_factory.mktemp("runtime-cache")  # shared: the bundle is not what is compared
    sites = []
    for name, workers in (("serial", "0"), ("parallel", "2")):
        root = tmp_path_factory.mktemp(f"build-{name}")
        project = copy_real_project(root / "project")
        build = run_build(project, env={"AINOTES_CACHE_DIR": str(root / "render-cache"),
                                        "AINOTES_SHARED_CACHE_DIR": str(runtime), "AINOTES_RENDER_WORKERS": workers})
        assert build.returncode == 0, build.output
        sites.append(build.site)
    return sites[0], sites[1]


def test_serial_and_parallel_builds_are_byte_identical(serial_and_parallel):
    serial, parallel = (_files(site) for site in serial_and_parallel)
    assert sorted(serial) == sorted(parallel)
    assert any(name.endswith(".png") for name in serial) and any(name.endswith("-dark.svg") for name in serial)
    differences = []
    for name in sorted(serial):
        a, b = serial[name].read_bytes(), parallel[name].read_bytes()
        normalise = MKDOCS_DATED.get(name)
        if a != b and (normalise is None or normalise(a) != normalise(b)):
            differences.append(f"{name}: {_first_difference(a, b)}")
    assert not differences, "serial and parallel builds differ:\n" + "\n".join(differences)
