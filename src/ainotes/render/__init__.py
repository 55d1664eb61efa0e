"""Vega-Lite specs to static SVG and PNG, compiled Vega, and the Vega runtime, through vl-convert.

The package's parts: :mod:`~ainotes.render.engine` (vl-convert and the producers, the only
importer of vl-convert), :mod:`~ainotes.render.pool` (the queue and the worker pool),
:mod:`~ainotes.render.session` (:class:`RenderSession`: one process's rendering, in one object).
A build hands its session to the drawers (:class:`ainotes.fences.kind.DrawSite` ``renders``); the
functions here are the process's own :data:`SESSION`'s, for callers outside a build.

Rendering a chart takes a few hundred milliseconds and a site renders each one
several times over (two themes, several formats, every build), so every result
goes through a content-addressed cache:

* key: SHA-256 of the canonical JSON of the spec, the output kind, the scale,
  the vl-convert, Vega and Vega-Lite versions and :data:`CACHE_FORMAT`;
* place: ``$AINOTES_CACHE_DIR``, else ``${XDG_CACHE_HOME:-~/.cache}/ainotes/render``;
* entry: one file, a header line ``ainotes-render <format> sha256=<hex> length=<n>``
  followed by the payload. An entry whose payload does not match its header
  (truncated, corrupted) is deleted and rendered again, never served;
* writes go to a temporary file in the same folder and are moved into place
  with :func:`os.replace`, so builds running at once never see half an entry.

An in-process memo sits in front of the disk. Output is deterministic: the same
spec gives byte-identical SVG.

A build that needs many renders announces them first (:func:`prefetch`, or
:func:`render_many` to wait for them): each distinct cache key is rendered once,
in a pool of worker processes sized to the usable cores and started with
*spawn* (vl-convert runs one V8 engine per process, so threads do not help and a
forked copy of a started engine hangs), and only when there is enough work to
pay for a worker's start-up. A worker renders exactly what :func:`svg`,
:func:`png` and :func:`vega` would render here, through the same functions, so
a parallel build is byte-identical to a serial one.

What depends only on code and tool versions, not on anyone's charts (the Vega
runtime bundle, about a second to build; chart grammars that altair builds) is
kept apart from the render cache, in ``$AINOTES_SHARED_CACHE_DIR``, else
``${XDG_CACHE_HOME:-~/.cache}/ainotes/shared``: one entry per version of what made
it, shared by every build and project (a cold render cache does not cost it
again), with the same checksum header and atomic writes.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Iterable
from typing import Any

from ainotes.base.cache import cache_dir, shared_dir
from ainotes.render.engine import (
    COMPILED_BASES_KEPT,
    PNG_SCALE,
    RUNTIME_FALLBACK_SNIPPET,
    RUNTIME_SNIPPET,
    cache_key,
    relayout,
    still_spec,
    vega_lite_version,
)
from ainotes.render.pool import (
    JOBS_PER_WORKER,
    POOL_MIN_JOBS,
    RUNTIME_REQUEST,
    WORKERS_ENV,
    PoolFacts,
    Progress,
    RenderSummary,
    Request,
    group_request,
    svg_request,
    usable_cores,
    vega_request,
    worker_limit,
)
from ainotes.render.session import SESSION, RenderSession

__all__ = [
    "COMPILED_BASES_KEPT", "JOBS_PER_WORKER", "PNG_SCALE", "POOL_MIN_JOBS", "RUNTIME_FALLBACK_SNIPPET",
    "RUNTIME_REQUEST", "RUNTIME_SNIPPET", "SESSION", "WORKERS_ENV", "PoolFacts", "Progress", "RenderSession",
    "RenderSummary", "Request", "cache_dir", "cache_key", "compile_vega", "drain", "forget_queued",
    "group_request", "inline_runtime", "inline_runtime_if_made", "png", "prefetch", "relayout", "render_many",
    "responsive", "runtime_js", "shared_dir", "shutdown", "start_engine", "static_svg_for_page", "stderr_progress",
    "still_spec", "svg", "svg_request", "svg_size", "usable_cores", "vega", "vega_lite_version", "vega_request",
    "vega_script_json", "worker_limit",
]


# -- the process's own session --------------------------------------------------------------------


def svg(spec: dict[str, Any]) -> str:
    """:meth:`RenderSession.svg` of :data:`SESSION`: the chart as a static SVG document."""
    return SESSION.svg(spec)


def png(spec: dict[str, Any], scale: float = PNG_SCALE) -> bytes:
    """:meth:`RenderSession.png` of :data:`SESSION`: the chart as a PNG, ``scale`` device pixels per CSS pixel."""
    return SESSION.png(spec, scale)


def vega(spec: dict[str, Any]) -> dict[str, Any]:
    """:meth:`RenderSession.vega` of :data:`SESSION`: the spec compiled to Vega (a fresh dict each call)."""
    return SESSION.vega(spec)


def vega_script_json(spec: dict[str, Any]) -> str:
    """:meth:`RenderSession.vega_script_json` of :data:`SESSION`."""
    return SESSION.vega_script_json(spec)


def compile_vega(spec: dict[str, Any], version: str) -> dict[str, Any]:
    """:meth:`ainotes.render.engine.Engine.compile_vega` of :data:`SESSION`: one compile for a
    chart's still, phone still and live view, the compiler's own output at each layout."""
    return SESSION.engine.compile_vega(spec, version)


def runtime_js() -> str:
    """:meth:`RenderSession.runtime_js` of :data:`SESSION`: the Vega-only runtime."""
    return SESSION.runtime_js()


def inline_runtime() -> str:
    """:meth:`RenderSession.inline_runtime` of :data:`SESSION`."""
    return SESSION.inline_runtime()


def inline_runtime_if_made() -> str | None:
    """:meth:`RenderSession.inline_runtime_if_made` of :data:`SESSION`."""
    return SESSION.inline_runtime_if_made()


def prefetch(requests: Iterable[Request], *, progress: Progress | None = None) -> int:
    """:meth:`RenderSession.prefetch` of :data:`SESSION`: queue renders to run while the build goes on."""
    return SESSION.prefetch(requests, progress=progress)


def drain(*, progress: Progress | None = None) -> int:
    """:meth:`RenderSession.drain` of :data:`SESSION`: wait for every queued render."""
    return SESSION.drain(progress=progress)


def render_many(requests: Iterable[Request], *, progress: Progress | None = None) -> RenderSummary:
    """:meth:`RenderSession.render_many` of :data:`SESSION`: render and wait."""
    return SESSION.render_many(requests, progress=progress)


def forget_queued() -> int:
    """:meth:`RenderSession.forget_queued` of :data:`SESSION`."""
    return SESSION.forget_queued()


def start_engine() -> None:
    """Start :data:`SESSION`'s vl-convert (V8) now rather than at the first render: :meth:`Engine.start`."""
    SESSION.engine.start()


def shutdown() -> None:
    """Stop the render workers (a build's end; also run at exit). The next batch starts new ones."""
    SESSION.scheduler.shutdown()


def stderr_progress(done: int, total: int) -> None:
    """A :data:`Progress` for commands that render many files: one line on stderr."""
    print(f"ainotes: {done} of {total} chart renders done", file=sys.stderr, flush=True)


# -- specs and SVGs as a page holds them ----------------------------------------------------------


def responsive(spec: dict[str, Any]) -> dict[str, Any]:
    """A copy of ``spec`` that fills its container: ``width``/``height`` ``"container"`` and
    ``autosize: fit``, so the view takes the size of the box the static SVG reserved."""
    return {**spec, "width": "container", "height": "container",
            "autosize": {"type": "fit", "contains": "padding", "resize": True}}


def svg_size(svg_text: str) -> tuple[float, float]:
    """The width and height attributes of an SVG document's root, in CSS pixels."""
    match = re.search(r'<svg[^>]*\bwidth="([\d.]+)"[^>]*\bheight="([\d.]+)"', svg_text)
    if not match:
        return (4.0, 3.0)
    return (float(match.group(1)), float(match.group(2)))


def static_svg_for_page(svg_text: str) -> str:
    """The static SVG ready to sit inside an HTML page: no XML declaration, with a ``viewBox``
    so it scales to the box that holds it, and hidden from assistive tech only if it says so."""
    text = re.sub(r"^\s*<\?xml[^>]*\?>\s*", "", svg_text)
    width, height = svg_size(text)
    if "viewBox=" not in text[: text.find(">")]:
        text = text.replace("<svg", f'<svg viewBox="0 0 {width:g} {height:g}"', 1)
    return text
