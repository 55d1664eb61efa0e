"""Fixtures shared by every test file."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings
from playwright.sync_api import sync_playwright

from browser_support import launch_chromium
from preset_support import presets_with_additions
from shared_sites import SharedBuild, SharedSites
from sitebuild import copy_real_project

# Shared machines: a property test must fail on a wrong answer, never on a slow example.
# The autouse cache fixture below is function-scoped on purpose: one cache folder per test, shared by
# that test's examples, which is what the health check would otherwise warn about.
settings.register_profile("ainotes", deadline=None, print_blob=True,
                          suppress_health_check=[HealthCheck.function_scoped_fixture])
settings.load_profile("ainotes")

SHARED_SITES = pytest.StashKey[SharedSites]()
_SHARED_INPUT = ("ainotes_shared_root", "ainotes_shared_origin")


def pytest_configure(config: pytest.Config) -> None:
    """The run's shared sites (tests/shared_sites.py): made by the process that starts the run, known to
    its xdist workers through ``workerinput``."""
    workerinput = getattr(config, "workerinput", None)
    if workerinput is not None and _SHARED_INPUT[0] in workerinput:
        config.stash[SHARED_SITES] = SharedSites(Path(workerinput[_SHARED_INPUT[0]]), workerinput[_SHARED_INPUT[1]])
    else:
        config.stash[SHARED_SITES] = SharedSites.start()


@pytest.hookimpl(optionalhook=True)
def pytest_configure_node(node) -> None:
    shared = node.config.stash[SHARED_SITES]
    node.workerinput[_SHARED_INPUT[0]] = str(shared.root)
    node.workerinput[_SHARED_INPUT[1]] = shared.origin


# The real site's build: its hash seed and render workers fixed, so that test_reproducible can compare
# another build, with another seed and no workers, byte for byte against this one.
REAL_SITE_ENV = {"PYTHONHASHSEED": "1", "AINOTES_RENDER_WORKERS": "2"}
# Set by `make test` and `make test-matrix`: start building the shared sites before any test asks.
PREBUILD_VARIABLE = "AINOTES_TEST_PREBUILD"


def pytest_sessionstart(session: pytest.Session) -> None:
    if getattr(session.config, "workerinput", None) is None and os.environ.get(PREBUILD_VARIABLE):
        shared = session.config.stash[SHARED_SITES]
        shared.prebuild([("notes", copy_real_project, REAL_SITE_ENV),
                         ("more-presets", _with_additions, shared.render_cache_of("notes"))])


def pytest_unconfigure(config: pytest.Config) -> None:
    if SHARED_SITES in config.stash:
        config.stash[SHARED_SITES].stop()


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


@pytest.fixture(scope="session")
def shared_sites(pytestconfig: pytest.Config) -> SharedSites:
    return pytestconfig.stash[SHARED_SITES]


@pytest.fixture(scope="session")
def real_site(shared_sites: SharedSites) -> SharedBuild:
    """The repository's own site (a copy of its sources), built once per run with ``mkdocs build --strict``
    for and served at ``http://127.0.0.2:PORT/notes/``: another host and port than the preview default,
    under a sub-path, as a project site on a static host is. Read it; never write into it."""
    build = shared_sites.build("notes", copy_real_project, REAL_SITE_ENV)
    assert build.returncode == 0, build.output
    return build


def _with_additions(root: Path) -> Path:
    project = copy_real_project(root)
    presets_with_additions(project / "presets")  # an H200 and an MI325X beside whatever ships
    return project


@pytest.fixture(scope="session")
def site_with_additions(shared_sites: SharedSites) -> SharedBuild:
    """The real site with two GPU presets added beside the shipped ones, built once per run, served at
    ``/more-presets/``. It shares the real site's render cache: only the charts that draw the added
    presets are drawn again."""
    build = shared_sites.build("more-presets", _with_additions, shared_sites.render_cache_of("notes"))
    assert build.returncode == 0, build.output
    return build


_SHARED_FIXTURES = ("real_site", "site_with_additions", "shared_sites")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The order xdist hands tests out in (``--dist loadgroup --no-loadscope-reorder``): the files kept on
    one worker first (the longest units), then the other browser and build tests, the quick ones last,
    so that both workers run out of work at about the same time. Within each, the collection's order.
    Every worker sorts the same collection the same way."""

    def weight(item: pytest.Item) -> tuple[int, int]:
        shared = any(name in getattr(item, "fixturenames", ()) for name in _SHARED_FIXTURES)
        if item.get_closest_marker("xdist_group") is not None:
            return 0, shared  # the shared sites are still being built at the start
        if item.get_closest_marker("browser") is not None or item.get_closest_marker("build") is not None:
            return 1, 0
        return 2, 0

    items.sort(key=weight)
