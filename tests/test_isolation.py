"""The suite never reads or writes the user's own caches: every test gets its own folders (tests/conftest.py)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from ainotes.base import cache

USER_CACHE = Path.home() / ".cache"


def _outside_the_users_cache(folder: Path) -> bool:
    return not folder.resolve().is_relative_to(USER_CACHE.resolve())


def test_render_and_shared_caches_are_the_runs_own(tmp_path_factory) -> None:
    base = tmp_path_factory.getbasetemp().resolve()
    for folder in (cache.cache_dir(), cache.shared_dir()):
        assert _outside_the_users_cache(folder), folder
        assert folder.resolve().is_relative_to(base), folder


def test_each_test_gets_an_empty_render_cache_of_its_own() -> None:
    folder = cache.cache_dir()
    assert not folder.exists() or not any(folder.iterdir())  # nothing an earlier test (or run) kept


def test_a_subprocess_inherits_the_tests_caches() -> None:
    out = subprocess.run([sys.executable, "-m", "ainotes", "cache", "info"], capture_output=True, text=True,
                         check=True, timeout=120).stdout
    folder = Path(out.splitlines()[0].removeprefix("render cache: "))
    assert folder == cache.cache_dir()
    assert _outside_the_users_cache(folder)
