"""Fixtures shared by every test file."""

from __future__ import annotations

import pytest
from hypothesis import settings
from playwright.sync_api import sync_playwright

from browser_support import launch_chromium

# Shared machines: a property test must fail on a wrong answer, never on a slow example.
settings.register_profile("ainotes", deadline=None, print_blob=True)
settings.load_profile("ainotes")


@pytest.fixture(scope="session")
def browser():
    """One Debian chromium for the whole run: Playwright's sync API allows one driver at a time."""
    with sync_playwright() as playwright:
        chromium = launch_chromium(playwright)
        yield chromium
        chromium.close()
