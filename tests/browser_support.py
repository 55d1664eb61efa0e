"""Helpers for the real-browser suite (tests/test_browser.py): serving built sites under a
sub-path, launching Debian's chromium through Playwright, and watching every page for
outside requests, console errors, page errors and failed responses."""

from __future__ import annotations

import contextlib
import functools
import http.server
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit

from playwright.sync_api import Browser, BrowserContext, Page, Playwright, Route
from playwright.sync_api import TimeoutError as PlaywrightTimeout

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update"]
DESK = {"width": 1280, "height": 900}
PHONE = {"width": 360, "height": 740}
TABLET = {"width": 768, "height": 1000}
# Long enough for a cold chromium on a busy 2-core machine, short enough that a failure reports quickly.
WAIT_MS = 15_000

# True once every roofline figure shows its live Vega view and every stepper is enhanced.
CHARTS_READY_JS = """() =>
  [...document.querySelectorAll('figure.ainotes-chart')].every(f => f.classList.contains('ainotes-chart--live')
      && f.querySelector('.ainotes-chart__view:not(.ainotes-chart__view--pending) svg'))
  && [...document.querySelectorAll('.ainotes-stepper')].every(s => s.hasAttribute('data-ainotes-ready'))"""


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format, *args):
        pass

    def handle(self):
        # The browser drops connections it no longer needs (instant navigation, closed pages).
        with contextlib.suppress(BrokenPipeError, ConnectionResetError):
            super().handle()


class StaticServer:
    """``http.server`` on ``host`` (127.0.0.1 unless told) and a free port, serving ``root`` from a
    daemon thread.

    Bound before anything is built, so the port is known for ``site_url`` and cannot be taken.
    """

    def __init__(self, root: Path, host: str = "127.0.0.1"):
        handler = functools.partial(_QuietHandler, directory=str(root))
        self._server = http.server.ThreadingHTTPServer((host, 0), handler)
        self._server.daemon_threads = True
        self.port: int = self._server.server_address[1]
        self.origin = f"http://{host}:{self.port}"
        self._thread = threading.Thread(target=self._server.serve_forever, name="ainotes-static", daemon=True)

    def start(self) -> StaticServer:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)


def launch_chromium(playwright: Playwright) -> Browser:
    """Debian's chromium, never a downloaded browser."""
    return playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)


@dataclass
class Watch:
    """What the pages of one browser context did that a reader's browser must not see."""

    outside_requests: list[str] = field(default_factory=list)
    console_errors: list[str] = field(default_factory=list)
    page_errors: list[str] = field(default_factory=list)
    failed_responses: list[str] = field(default_factory=list)

    def problems(self) -> list[str]:
        return (
            [f"outside request: {u}" for u in self.outside_requests]
            + [f"console error: {m}" for m in self.console_errors]
            + [f"page error: {m}" for m in self.page_errors]
            + [f"failed response: {m}" for m in self.failed_responses]
        )

    def attach(self, page: Page) -> Page:
        def console(message) -> None:
            if message.type == "error":
                self.console_errors.append(f"{page.url}: {message.text}")

        page.on("console", console)
        page.on("pageerror", lambda error: self.page_errors.append(f"{page.url}: {error}"))
        page.on("response", lambda r: self.failed_responses.append(f"{r.status} {r.url}") if r.status >= 400 else None)
        return page


def guard_requests(context: BrowserContext, allowed: Callable[[str], bool], watch: Watch) -> None:
    """Route every request of ``context``: allowed ones go through, the rest are aborted and recorded."""

    def handle(route: Route) -> None:
        url = route.request.url
        if allowed(url):
            route.continue_()
        else:
            watch.outside_requests.append(url)
            route.abort()

    context.route("**/*", handle)


def same_origin(origin: str) -> Callable[[str], bool]:
    expected = urlsplit(origin)

    def allowed(url: str) -> bool:
        parts = urlsplit(url)
        return parts.scheme == expected.scheme and parts.netloc == expected.netloc

    return allowed


def file_only(url: str) -> bool:
    return url.startswith("file://")


def wait_until(page: Page, expression: str, arg=None, *, failure: Callable[[], str] | str, timeout_ms: int = WAIT_MS):
    """``page.wait_for_function`` that fails as an assertion saying what was expected and what was seen."""
    try:
        return page.wait_for_function(expression, arg=arg, timeout=timeout_ms)
    except PlaywrightTimeout:
        message = failure() if callable(failure) else failure
        raise AssertionError(message) from None


CHARTS_STATE_JS = """() => ({
  figures: [...document.querySelectorAll('figure.ainotes-chart')].map(f => f.id + ': ' + f.className),
  steppers: [...document.querySelectorAll('.ainotes-stepper')]
    .map(s => s.id + (s.hasAttribute('data-ainotes-ready') ? ': ready' : ': not enhanced')),
})"""


def wait_for_charts(page: Page) -> None:
    wait_until(page, CHARTS_READY_JS,
               failure=lambda: f"{page.url}: charts did not become interactive: {page.evaluate(CHARTS_STATE_JS)}")


def site_pages(site: Path) -> list[str]:
    """Every page of a built site as a URL path relative to the site root ('' for the home page)."""
    pages = []
    for index in sorted(site.rglob("index.html")):
        relative = index.parent.relative_to(site).as_posix()
        pages.append("" if relative == "." else relative + "/")
    return pages
