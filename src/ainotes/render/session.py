"""One process's rendering, in one object: :class:`RenderSession` (the counts of what vl-convert did,
the last few compiled specs, the assembled runtime, the queue and worker pool), and :data:`SESSION`,
the process's own, which a build passes to its drawers.

Every result goes through the content-addressed cache (:mod:`ainotes.base.cache`): the in-process
memo, then the disk, then a queued or running job (:class:`~ainotes.render.pool.Scheduler`), and only
then a render here.
"""

from __future__ import annotations

import atexit
import functools
import json
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from ainotes.base import cache, notices
from ainotes.base.cache import shared_dir
from ainotes.base.scripts import inline_script, script_safe
from ainotes.render.engine import (
    PNG_SCALE,
    Engine,
    Part,
    assemble_runtime,
    png_key,
    runtime_key,
    svg_key,
    vega_key,
    vega_lite_version,
)
from ainotes.render.pool import PoolFacts, Progress, RenderSummary, Request, Scheduler


def run_in_worker(parts: tuple[Part, ...]) -> list[bytes]:
    """A job's outputs, rendered in a worker process by that process's own :data:`SESSION`."""
    return SESSION.engine.run_job(parts)


@functools.cache
def _inline_runtime(code: str) -> str:
    return inline_script(code)


class RenderSession:
    """Everything rendering keeps in one process: the engine's counts (here and in workers, per
    output kind) and compiled specs, the assembled runtime, and the queue and worker pool of
    :meth:`prefetch`. The memo in front of the disk is :data:`ainotes.base.cache.MEMO`.
    :meth:`close` ends the pool (at exit, for the process's own :data:`SESSION`); :meth:`forget`
    makes it a fresh process as far as rendering goes."""

    def __init__(self) -> None:
        self.engine = Engine()
        self.counts = self.engine.counts
        self.compiled_bases = self.engine.compiled_bases
        self.runtime_text: dict[str, str] = {}  # the assembled runtime, per key
        self.scheduler = Scheduler(self.counts, self.engine.run_job, run_in_worker)

    def cached(self, key: str, make: Callable[[], bytes], folder: Path | None = None) -> bytes:
        """The payload under ``key``: from the memo, the disk, a queued or running job, else ``make()``."""
        payload = cache.MEMO.get(key)
        if payload is not None:
            cache.MEMO.move_to_end(key)
            return payload
        path = cache.entry_path(key, folder)
        payload = cache.read_entry(path)
        if payload is None:
            payload = self.scheduler.take(key)  # queued, or being rendered by a worker?
            if payload is None:
                payload = make()
                cache.write_entry(path, payload)
            elif not path.exists():
                # A job queued while the cache was another folder (the environment changed since, as
                # between two builds or tests in one process) wrote its entry there: keep one here too,
                # or the next process renders it again.
                cache.write_entry(path, payload)
        cache.MEMO.put(key, payload)
        return payload

    # -- outputs ---------------------------------------------------------------------------------

    def svg(self, spec: dict[str, Any]) -> str:
        """The chart as a static SVG document (text stays text, so it is searchable and scales)."""
        version = vega_lite_version(spec)
        return self.cached(svg_key(spec, version), lambda: self.engine.make_svg(spec, version)).decode("utf-8")

    def png(self, spec: dict[str, Any], scale: float = PNG_SCALE) -> bytes:
        """The chart as a PNG, ``scale`` device pixels per CSS pixel."""
        version = vega_lite_version(spec)
        return self.cached(png_key(spec, version, scale),
                           lambda: self.engine.make_png(self.svg(spec).encode("utf-8"), scale))

    def vega(self, spec: dict[str, Any]) -> dict[str, Any]:
        """The spec compiled to Vega, so pages can ship the smaller Vega-only runtime (a fresh dict each call)."""
        return json.loads(self._vega_bytes(spec))

    def vega_script_json(self, spec: dict[str, Any]) -> str:
        """``script_json(vega(spec))`` without decoding and encoding it again: the cached text is
        already compact JSON with sorted keys, as :func:`script_json` writes it."""
        return script_safe(self._vega_bytes(spec).decode("utf-8"))

    def _vega_bytes(self, spec: dict[str, Any]) -> bytes:
        version = vega_lite_version(spec)
        return self.cached(vega_key(spec, version), lambda: self.engine.make_vega(spec, version))

    # -- the Vega runtime ------------------------------------------------------------------------

    def runtime_js(self) -> str:
        """The Vega-only JavaScript runtime for a classic ``<script>``: sets ``window.vega`` and
        nothing else global. Deterministic for one vl-convert version; the bundle is built once
        per version and kept in :func:`~ainotes.base.cache.shared_dir`. Starts with the third-party
        notices (:func:`ainotes.base.notices.with_notices`), so every file it goes into carries them."""
        key = runtime_key()
        text = self.runtime_text.get(key)
        if text is None:
            bundle = self.cached(key, self.engine.make_runtime_bundle, shared_dir())
            text = self.runtime_text[key] = notices.with_notices(assemble_runtime(bundle.decode("utf-8")))
        return text

    def inline_runtime(self) -> str:
        """The runtime as a standalone page inlines it in a ``<script>``."""
        return _inline_runtime(self.runtime_js())

    def inline_runtime_if_made(self) -> str | None:
        """:meth:`inline_runtime` if this session has assembled the runtime, else ``None`` (nothing
        it wrote can then contain it, and assembling it would cost a second)."""
        return self.inline_runtime() if self.runtime_text else None

    # -- many renders at once --------------------------------------------------------------------

    def prefetch(self, requests: Iterable[Request], *, progress: Progress | None = None) -> int:
        """Queue the renders a build will need, so that they run (in parallel, once each) while the
        build goes on; :meth:`svg`, :meth:`png`, :meth:`vega` and :meth:`runtime_js` then wait
        for their own result only. Returns how many renders were queued (cached or already queued
        ones are not). ``progress(done, total)`` hears about the batch every few seconds once it
        has run for a while."""
        return self.scheduler.add(requests, progress)

    def render_while_building(self, on: bool = True) -> None:
        """Render what :meth:`prefetch` queues at once, in a thread of this process, when it is too little
        for the worker pool (a rebuild's changed chart under ``mkdocs serve``): V8 draws it while the build
        converts and templates the other pages, instead of when the page's figure asks for it."""
        self.scheduler.in_background = on

    def drain(self, *, progress: Progress | None = None) -> int:
        """Wait for every queued render; returns how many worker processes the batch used."""
        return self.scheduler.drain(progress)

    def render_many(self, requests: Iterable[Request], *, progress: Progress | None = None) -> RenderSummary:
        """Render everything ``requests`` name into the cache and wait for it (:meth:`prefetch`
        then :meth:`drain`)."""
        requests = list(requests)
        queued = self.scheduler.add(requests, progress)
        workers = self.scheduler.drain(progress)
        return RenderSummary(requested=len(requests), rendered=queued, workers=workers if queued else 0)

    def forget_queued(self) -> int:
        """Drop queued renders no worker has started: a new build calls this, so that an earlier
        build that stopped half-way (a page error under ``mkdocs serve``) leaves no stale work.
        Returns how many were dropped."""
        return self.scheduler.forget_queued()

    def forget(self) -> None:
        """Drop what this process remembers (memo, compiled specs, runtime text); the disk cache stays."""
        cache.MEMO.clear()
        self.compiled_bases.clear()
        self.runtime_text.clear()

    def pool(self) -> PoolFacts | None:
        """The worker pool, if one is running."""
        return self.scheduler.pool_facts()

    def close(self) -> None:
        """Finish or drop what is queued and end the worker pool."""
        self.scheduler.shutdown()


SESSION = RenderSession()
atexit.register(SESSION.close)
