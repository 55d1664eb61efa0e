"""Fixtures shared by every test file."""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest
from hypothesis import HealthCheck, settings
from playwright.sync_api import sync_playwright

from browser_support import launch_chromium

# Shared machines: a property test must fail on a wrong answer, never on a slow example.
# The autouse cache fixture below is function-scoped on purpose: one cache folder per test, shared by
# that test's examples, which is what the health check would otherwise warn about.
settings.register_profile("ainotes", deadline=None, print_blob=True,
                          suppress_health_check=[HealthCheck.function_scoped_fixture])
settings.load_profile("ainotes")

# Every variable through which ainotes (and the builders it runs under) finds a cache on disk.
CACHE_VARIABLES = ("AINOTES_CACHE_DIR", "AINOTES_SHARED_CACHE_DIR", "XDG_CACHE_HOME")


@pytest.fixture(scope="session", autouse=True)
def _session_caches(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """Cache folders of this run's own, set before any fixture of a wider scope builds a site.

    The user's ``~/.cache/ainotes`` is never read or written: a drawing kept there by an earlier run
    would be copied instead of drawn, and a test's verdict would depend on what ran before it.
    Subprocesses (builds, the installed command) inherit the variables.
    """
    root = tmp_path_factory.mktemp("caches")
    saved = {name: os.environ.get(name) for name in CACHE_VARIABLES}
    os.environ["AINOTES_CACHE_DIR"] = str(root / "render")
    # What depends only on code and tool versions (the Vega runtime bundle, chart grammars) is shared
    # by this run's tests: building it for every test would only repeat the same second.
    os.environ["AINOTES_SHARED_CACHE_DIR"] = str(root / "shared")
    os.environ["XDG_CACHE_HOME"] = str(root / "xdg")
    yield
    for name, value in saved.items():
        if value is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = value


@pytest.fixture(autouse=True)
def _own_render_cache(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each test gets an empty render cache (rendered charts and kept drawings) and its own
    ``XDG_CACHE_HOME``; a test may still point the variables elsewhere itself."""
    root = tmp_path_factory.mktemp("cache")
    monkeypatch.setenv("AINOTES_CACHE_DIR", str(root / "render"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(root / "xdg"))


@pytest.fixture(scope="session")
def browser():
    """One Debian chromium for the whole run: Playwright's sync API allows one driver at a time."""
    with sync_playwright() as playwright:
        chromium = launch_chromium(playwright)
        yield chromium
        chromium.close()
