"""Vega-Lite specs to static SVG and PNG, compiled Vega, and standalone pages, through vl-convert.

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

import atexit
import functools
import json
import logging
import math
import multiprocessing
import os
import re
import sys
import threading
import time
from collections import Counter, OrderedDict, deque
from collections.abc import Callable, Iterable
from concurrent.futures import Future, ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple

from ainotes.base import cache, notices
from ainotes.base.cache import cache_dir, shared_dir
from ainotes.base.scripts import inline_script, script_safe


def _vlc() -> Any:
    """vl-convert, imported on first use: parsing and checking a page's fences never loads it."""
    import vl_convert

    return vl_convert


log = logging.getLogger(__name__)

WORKERS_ENV = "AINOTES_RENDER_WORKERS"  # an upper bound on worker processes; 0 renders in-process only
# A worker costs 0.7-1 s of CPU to start (interpreter, imports, V8's start, which the build
# process then skips); one render 0.02-0.2 s. Fewer queued renders than POOL_MIN_JOBS are
# cheaper in-process; a worker is added for every JOBS_PER_WORKER renders waiting (about
# 1.5 s of work, what another start costs), up to the usable cores.
POOL_MIN_JOBS = 3
JOBS_PER_WORKER = 16
PNG_SCALE = 2.0  # device pixels per CSS pixel of the PNGs a site offers
PROGRESS_AFTER_S = 2.0  # a render batch that ends sooner says nothing
PROGRESS_EVERY_S = 3.0
# The Vega-only runtime: pages get specs compiled at build time, so they need neither
# Vega-Lite nor vega-embed (about 200 KB gzipped instead of 305 KB). vl-convert 1.9 binds a
# snippet's `vega` to vega's (missing) default export, i.e. null, so the snippet imports the
# namespace itself, by the module name vl-convert's bundler resolves from its own copy
# (nothing is fetched). Should a later vl-convert not resolve it, vega-embed's `vega`
# property is the same namespace, in the larger bundle.
RUNTIME_SNIPPET = (
    'import * as vegaModule from "https://cdn.jsdelivr.net/npm/vega@{version}/+esm"; window.vega = vegaModule;'
)
RUNTIME_FALLBACK_SNIPPET = "window.vega = vegaEmbed.vega;"





# -- cache ---------------------------------------------------------------------


def vega_lite_version(spec: dict[str, Any]) -> str:
    """The Vega-Lite release to compile with: the one the spec's ``$schema`` names when
    vl-convert ships it (altair writes specs against that schema), else the newest."""
    shipped = _vlc().get_vegalite_versions()
    match = re.search(r"/vega-lite/v(\d+)\.(\d+)", str(spec.get("$schema", "")))
    if match:
        wanted = f"{match.group(1)}.{match.group(2)}"
        if wanted in shipped:
            return wanted
    return shipped[-1]


@functools.cache
def _engine_versions() -> dict[str, str]:
    return {"vl_convert": str(getattr(_vlc(), "__version__", "")), "vega": _vlc().get_vega_version()}


def cache_key(kind: str, payload: Any, **options: Any) -> str:
    """A render's key: :func:`ainotes.base.cache.cache_key` with the vl-convert and Vega versions."""
    return cache.cache_key(kind, payload, versions=_engine_versions(), **options)


def _cached(key: str, make: Callable[[], bytes], folder: Path | None = None) -> bytes:
    payload = cache.MEMO.get(key)
    if payload is not None:
        cache.MEMO.move_to_end(key)
        return payload
    path = cache.entry_path(key, folder)
    payload = cache.read_entry(path)
    if payload is None:
        payload = SESSION.scheduler.take(key)  # queued, or being rendered by a worker?
        if payload is None:
            payload = make()
            cache.write_entry(path, payload)
    cache.MEMO.put(key, payload)
    return payload


# -- outputs -------------------------------------------------------------------


# The producers: the only places that call vl-convert for a chart, in this process or in a worker.


def still_spec(spec: dict[str, Any]) -> dict[str, Any]:
    """The spec a static picture is drawn from. A chart that names its still's plot size
    (``usermeta.ainotes.still``: ``{"width", "height"}``, see
    :func:`ainotes.charts.roofline.still_plot_size`) is laid out once, with autosize "pad" at
    that size, instead of twice by "fit"; any other spec as it is."""
    still = spec.get("usermeta", {}).get("ainotes", {}).get("still")
    if not isinstance(still, dict):
        return spec
    return {**spec, "autosize": {"type": "pad", "contains": "padding"},
            "width": still["width"], "height": still["height"]}


_LAYOUT_KEYS = ("width", "height", "autosize")
_CONTAINER_SIZE = "isFinite(containerSize()[{axis}]) ? containerSize()[{axis}] : 300"
COMPILED_BASES_KEPT = 32


def relayout(compiled: dict[str, Any], spec: dict[str, Any]) -> dict[str, Any] | None:
    """The Vega that Vega-Lite compiles ``spec`` to, from ``compiled``, the same spec compiled at
    another size and with other ``usermeta``: what the compiler writes for a fixed size
    (``width``, ``height``, ``autosize`` at the top) or for ``"container"`` (the two size
    signals it declares first), and ``usermeta`` as given (the compiler would write a whole
    number over 2**32 in it as a float, ``1e12`` as ``1000000000000.0``: the same JSON value).
    ``None`` for any other layout. The tests compare it with the compiler's own output."""
    width, height, autosize = spec.get("width"), spec.get("height"), spec.get("autosize")
    out = {key: value for key, value in compiled.items() if key not in (*_LAYOUT_KEYS, "usermeta")}
    if "usermeta" in spec:  # passed through untouched (a phone still's differs in its size alone)
        out["usermeta"] = spec["usermeta"]
    if isinstance(autosize, str):
        autosize = {"type": autosize}
    if not isinstance(autosize, dict):
        return None
    out["autosize"] = autosize
    if isinstance(width, (int, float)) and isinstance(height, (int, float)):
        out["width"], out["height"] = width, height
        return out
    if width == "container" and height == "container":
        signals = [{"name": name, "init": _CONTAINER_SIZE.format(axis=axis),
                    "on": [{"update": _CONTAINER_SIZE.format(axis=axis), "events": "window:resize"}]}
                   for axis, name in enumerate(("width", "height"))]
        out["signals"] = [*signals, *compiled.get("signals", [])]
        return out
    return None


def compile_vega(spec: dict[str, Any], version: str) -> dict[str, Any]:
    """``spec`` compiled to Vega. A chart's still, phone still and live view differ only in their
    layout (:data:`_LAYOUT_KEYS`), so the compiler runs once for all three in a process and each
    gets its layout put back (:func:`relayout`); the result is the compiler's own output."""
    if relayout({}, spec) is None:
        return _vlc().vegalite_to_vega(spec, vl_version=version)
    base = {key: value for key, value in spec.items() if key not in (*_LAYOUT_KEYS, "usermeta")}
    key = cache_key("vega-base", base, vega_lite=version)
    compiled = SESSION.compiled_bases.get(key)
    if compiled is None:
        compiled = _vlc().vegalite_to_vega({**base, "width": 1, "height": 1, "autosize": {"type": "pad"}},
                                        vl_version=version)
        SESSION.compiled_bases[key] = compiled
        while len(SESSION.compiled_bases) > COMPILED_BASES_KEPT:
            SESSION.compiled_bases.popitem(last=False)
    else:
        SESSION.compiled_bases.move_to_end(key)
    relaid = relayout(compiled, spec)
    assert relaid is not None  # checked above
    return relaid


def _make_svg(spec: dict[str, Any], version: str) -> bytes:
    SESSION.counts["svg"] += 1
    return _vlc().vega_to_svg(compile_vega(still_spec(spec), version)).encode("utf-8")


def _make_png(svg_bytes: bytes, scale: float) -> bytes:
    # Rasterising the static SVG gives the same pixels as a second Vega run, in a third of the time.
    SESSION.counts["png"] += 1
    return bytes(_vlc().svg_to_png(svg_bytes.decode("utf-8"), scale=scale))


def _make_vega(spec: dict[str, Any], version: str) -> bytes:
    SESSION.counts["vega"] += 1
    return json.dumps(compile_vega(spec, version), sort_keys=True,
                      separators=(",", ":"), ensure_ascii=False).encode("utf-8")


def _svg_key(spec: dict[str, Any], version: str) -> str:
    return cache_key("svg", spec, vega_lite=version)


def _png_key(spec: dict[str, Any], version: str, scale: float) -> str:
    return cache_key("png", spec, vega_lite=version, scale=float(scale))


def _vega_key(spec: dict[str, Any], version: str) -> str:
    return cache_key("vega", spec, vega_lite=version)


def svg(spec: dict[str, Any]) -> str:
    """The chart as a static SVG document (text stays text, so it is searchable and scales)."""
    version = vega_lite_version(spec)
    return _cached(_svg_key(spec, version), lambda: _make_svg(spec, version)).decode("utf-8")


def png(spec: dict[str, Any], scale: float = PNG_SCALE) -> bytes:
    """The chart as a PNG, ``scale`` device pixels per CSS pixel."""
    version = vega_lite_version(spec)
    return _cached(_png_key(spec, version, scale), lambda: _make_png(svg(spec).encode("utf-8"), scale))


def vega(spec: dict[str, Any]) -> dict[str, Any]:
    """The spec compiled to Vega, so pages can ship the smaller Vega-only runtime (a fresh dict each call)."""
    return json.loads(_vega_bytes(spec))


def vega_script_json(spec: dict[str, Any]) -> str:
    """``script_json(vega(spec))`` without decoding and encoding it again: the cached text is
    already compact JSON with sorted keys, as :func:`script_json` writes it."""
    return script_safe(_vega_bytes(spec).decode("utf-8"))


def _vega_bytes(spec: dict[str, Any]) -> bytes:
    version = vega_lite_version(spec)
    return _cached(_vega_key(spec, version), lambda: _make_vega(spec, version))


# -- the Vega runtime ----------------------------------------------------------------------------


def _runtime_key() -> str:
    return cache_key("runtime", RUNTIME_SNIPPET, fallback=RUNTIME_FALLBACK_SNIPPET)


def _make_runtime_bundle() -> bytes:
    """vl-convert's bundle of the Vega runtime (about a second): cached in :func:`shared_dir`."""
    SESSION.counts["runtime"] += 1
    try:
        bundle = _vlc().javascript_bundle(snippet=RUNTIME_SNIPPET.format(version=_vlc().get_vega_version()))
    except Exception as exc:  # vl-convert raises a plain Exception when the bundler cannot resolve a module
        log.debug("render: Vega-only bundle failed (%s); using the vega-embed bundle", exc)
        bundle = _vlc().javascript_bundle(snippet=RUNTIME_FALLBACK_SNIPPET)
    return bundle.encode("utf-8")


def _assemble_runtime(bundle: str) -> str:
    """The runtime file from vl-convert's bundle; every addition to the file goes here.

    The bundle is an ES module's body; in a function it keeps its top-level names to itself
    when loaded by a classic <script>, as pages do."""
    return f'(function () {{"use strict";\n{bundle}\n}})();\n'


def runtime_js() -> str:
    """The Vega-only JavaScript runtime for a classic ``<script>``: sets ``window.vega`` and
    nothing else global. Deterministic for one vl-convert version; the bundle is built once
    per version and kept in :func:`shared_dir`. Starts with the third-party notices
    (:func:`ainotes.base.notices.with_notices`), so every file it goes into carries them."""
    key = _runtime_key()
    text = SESSION.runtime_text.get(key)
    if text is None:
        bundle = _cached(key, _make_runtime_bundle, shared_dir())
        text = SESSION.runtime_text[key] = notices.with_notices(_assemble_runtime(bundle.decode("utf-8")))
    return text




@functools.cache
def _inline_runtime(code: str) -> str:
    return inline_script(code)


def inline_runtime() -> str:
    """The runtime as a standalone page inlines it in a ``<script>``."""
    return _inline_runtime(runtime_js())


def inline_runtime_if_made() -> str | None:
    """:func:`inline_runtime` if this process has assembled the runtime, else ``None`` (nothing
    it wrote can then contain it, and assembling it would cost a second)."""
    return inline_runtime() if SESSION.runtime_text else None


# -- many renders at once --------------------------------------------------------------------------


class Request(NamedTuple):
    """One render a build will need: ``"svg"`` (and a PNG at each of ``png_scales``,
    rasterised from that SVG in the same worker), ``"vega"`` (compiled spec) or
    ``"runtime"`` (the Vega runtime bundle; no spec); or ``"group"``: ``parts``, renders of
    one chart, done by one worker in turn so that they share its compiles (:func:`compile_vega`)."""

    kind: str
    spec: dict[str, Any] | None = None
    png_scales: tuple[float, ...] = ()
    parts: tuple[Request, ...] = ()


def svg_request(spec: dict[str, Any], *, png_scales: Iterable[float] = ()) -> Request:
    """What :func:`svg` (and :func:`png` at each scale) will be asked for ``spec``."""
    return Request("svg", spec, tuple(float(s) for s in png_scales))


def vega_request(spec: dict[str, Any]) -> Request:
    """What :func:`vega` will be asked for ``spec``."""
    return Request("vega", spec)


def group_request(requests: Iterable[Request]) -> Request:
    """``requests`` (svg and vega requests of one chart) as one job for one worker."""
    parts = tuple(requests)
    if any(part.kind not in ("svg", "vega") for part in parts):
        raise ValueError("render: a group holds svg and vega requests only")
    return Request("group", parts=parts)


RUNTIME_REQUEST = Request("runtime")
Progress = Callable[[int, int], None]  # (renders finished, renders known) of the current batch


class _Part(NamedTuple):
    """One render of a job: its kind, spec, Vega-Lite version and PNG scales (svg only)."""

    kind: str
    spec: dict[str, Any] | None
    version: str
    scales: tuple[float, ...]


@dataclass(eq=False)
class _Job:
    parts: tuple[_Part, ...]
    keys: tuple[str, ...]  # one per output, in the order _run_job returns them
    folder: Path
    state: str = "queued"  # queued → running → done


def _run_part(kind: str, spec: dict[str, Any] | None, version: str, scales: tuple[float, ...]) -> list[bytes]:
    if kind == "svg" and spec is not None:
        svg_bytes = _make_svg(spec, version)
        return [svg_bytes, *(_make_png(svg_bytes, scale) for scale in scales)]
    if kind == "vega" and spec is not None:
        return [_make_vega(spec, version)]
    if kind == "runtime":
        return [_make_runtime_bundle()]
    raise ValueError(f"render: unknown request kind {kind!r}")


def _run_job(parts: tuple[_Part, ...]) -> list[bytes]:
    """One job's outputs, part after part, through the producers the one-at-a-time functions
    call (so a worker's bytes are this process's bytes). Runs in a worker process, or here
    without one."""
    return [payload for part in parts for payload in _run_part(*part)]


def usable_cores() -> int:
    """The cores this process may run on (its affinity mask, not the machine's count)."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # not Linux
        return os.cpu_count() or 1


def worker_limit() -> int:
    """How many render workers a batch may use: ``$AINOTES_RENDER_WORKERS`` when set (0: none),
    else the usable cores, and none on a single core, where a worker only adds its start-up."""
    configured = os.environ.get(WORKERS_ENV, "").strip()
    if configured:
        try:
            return max(0, int(configured))
        except ValueError:
            log.warning("%s=%r is not a whole number; using the usable cores", WORKERS_ENV, configured)
    cores = usable_cores()
    return cores if cores >= 2 else 0


@dataclass
class RenderSummary:
    """What :func:`render_many` did: requests given, render jobs they needed after the caches
    and de-duplication (an SVG and the PNGs made from it are one job), and how many worker
    processes ran them (0: in this process)."""

    requested: int
    rendered: int
    workers: int


class _Scheduler:
    """Queued renders, the worker pool and the batch's progress.

    Jobs run in a spawn-started :class:`ProcessPoolExecutor`; at most one job per wanted
    worker is in flight (one more once all are started), which is also how many processes
    the executor starts. Completions
    go through a queue to one collector thread that writes the cache entries and hands out
    the next jobs, so the executor's own threads never wait on our lock.
    """

    def __init__(self) -> None:
        self._lock = threading.Condition(threading.RLock())
        self._queue: deque[_Job] = deque()
        self._jobs: dict[str, _Job] = {}  # key → its job while queued or running
        self._kept: dict[str, bytes] = {}  # results the disk would not take
        self._pool: ProcessPoolExecutor | None = None
        self._collector: threading.Thread | None = None
        self._completions: deque[tuple[_Job, Future[list[bytes]] | None]] = deque()
        self._in_flight = 0
        self._limit = 0
        self.batch_workers = 0  # the most jobs in flight at once in this batch: worker processes used
        self._progress: Progress | None = None
        self._total = self._finished = self.batch_workers = 0
        self._batch_started = self._last_report = 0.0
        self._reported = False

    # -- adding --------------------------------------------------------------------------

    def add(self, requests: Iterable[Request], progress: Progress | None) -> int:
        new = 0
        with self._lock:
            if progress is not None:
                self._progress = progress
            for request in requests:
                job = self._job_for(request)
                if job is None:
                    continue
                if not self._jobs and not self._queue:
                    self._new_batch()
                for key in job.keys:
                    self._jobs[key] = job
                self._queue.append(job)
                self._total += len(job.parts)
                new += 1
            if self._pool is None and len(self._queue) >= POOL_MIN_JOBS:
                self._start_pool()
            self._pump()
        return new

    def _job_for(self, request: Request) -> _Job | None:
        """The job for a request, or ``None`` when every output it names is cached or queued."""
        parts: list[_Part] = []
        keys: list[str] = []
        folder = shared_dir() if request.kind == "runtime" else cache_dir()
        for one in request.parts if request.kind == "group" else (request,):
            part, part_keys = self._part_for(one)
            if not all(key in cache.MEMO or key in self._jobs or key in self._kept
                       or cache.entry_path(key, folder).exists() for key in part_keys):
                parts.append(part)
                keys.extend(part_keys)
        return _Job(tuple(parts), tuple(keys), folder) if parts else None

    @staticmethod
    def _part_for(request: Request) -> tuple[_Part, tuple[str, ...]]:
        spec = request.spec
        if request.kind == "runtime":
            return _Part("runtime", None, "", ()), (_runtime_key(),)
        if request.kind in ("svg", "vega") and isinstance(spec, dict):
            version = vega_lite_version(spec)
            if request.kind == "svg":
                keys = (_svg_key(spec, version), *(_png_key(spec, version, s) for s in request.png_scales))
                return _Part("svg", spec, version, request.png_scales), keys
            return _Part("vega", spec, version, ()), (_vega_key(spec, version),)
        raise ValueError(f"render: a {request.kind!r} request needs a spec dict" if request.kind in ("svg", "vega")
                         else f"render: unknown request kind {request.kind!r}")

    def _new_batch(self) -> None:
        self._total = self._finished = self.batch_workers = 0
        self._batch_started = self._last_report = time.monotonic()
        self._reported = False

    # -- the pool ------------------------------------------------------------------------

    def pool_facts(self) -> PoolFacts | None:
        pool = self._pool
        if pool is None:
            return None
        context = getattr(pool, "_mp_context", None)  # the executor keeps its start method here only
        method = context.get_start_method() if context is not None else "unknown"
        return PoolFacts(method, len(getattr(pool, "_processes", None) or {}))

    def _start_pool(self) -> None:
        self._limit = worker_limit()
        if self._limit < 1:
            return
        try:
            # spawn: a forked copy of a process whose V8 engine has started hangs.
            self._pool = ProcessPoolExecutor(max_workers=self._limit, mp_context=multiprocessing.get_context("spawn"))
        except (OSError, ValueError) as exc:
            log.debug("render: no worker pool (%s); rendering in this process", exc)
            self._limit = 0
            return
        self._collector = threading.Thread(target=self._collect, name="ainotes-render-collector", daemon=True)
        self._collector.start()

    def _wanted_workers(self) -> int:
        waiting = len(self._queue) + self._in_flight
        return min(self._limit, max(1, math.ceil(waiting / JOBS_PER_WORKER)))

    def _pump(self) -> None:
        """Hand queued jobs to the pool, one per wanted worker (lock held)."""
        pool = self._pool
        if pool is None:
            return
        wanted = self._wanted_workers()
        # One job waits ahead in the executor's queue once every worker is started (a worker then
        # never idles while this process hands out the next job); before that, one more job in
        # flight would start one more process.
        cap = wanted + 1 if wanted == self._limit else wanted
        while self._queue and self._in_flight < cap:
            job = self._queue.popleft()
            job.state = "running"
            try:
                future = pool.submit(_run_job, job.parts)
            except Exception as exc:  # a broken or shut-down pool: the rest is rendered here
                log.debug("render: worker pool unusable (%s); rendering in this process", exc)
                job.state = "queued"
                self._queue.appendleft(job)
                self._pool = None
                return
            self._in_flight += 1
            self.batch_workers = max(self.batch_workers, min(self._in_flight, wanted))
            future.add_done_callback(functools.partial(self._completed, job))

    def _completed(self, job: _Job, future: Future[list[bytes]]) -> None:
        # Called on the executor's thread: hand over and return at once.
        self._completions.append((job, future))
        with self._lock:
            self._lock.notify_all()

    def _collect(self) -> None:
        while True:
            with self._lock:
                while not self._completions and (self._pool is not None or self._in_flight):
                    self._lock.wait()
                if not self._completions:
                    if self._collector is threading.current_thread():
                        self._collector = None
                    return  # no pool, nothing in flight: a new pool gets a new collector
                job, future = self._completions.popleft()
            payloads: list[bytes] | None = None
            if future is not None:
                try:
                    payloads = future.result()
                except Exception as exc:  # a bad spec, or a worker that died: the caller renders it here
                    log.debug("render: worker job failed (%s); left to this process", exc)
            if payloads is not None:
                self._store(job, payloads, counted=False)
            with self._lock:
                self._in_flight -= 1
                self._finish(job)
                self._pump()

    # -- results -------------------------------------------------------------------------

    def _store(self, job: _Job, payloads: list[bytes], *, counted: bool) -> None:
        """Write a finished job's entries (outside the lock: disk work)."""
        if not counted:  # rendered in a worker: count it here, where the counters are read
            for part in job.parts:
                SESSION.counts[part.kind] += 1
                SESSION.counts["png"] += len(part.scales)
        for key, payload in zip(job.keys, payloads, strict=True):
            if not cache.write_entry(cache.entry_path(key, job.folder), payload):
                with self._lock:
                    self._kept[key] = payload

    def _finish(self, job: _Job) -> None:
        """Mark a job done, wake its waiters, report progress (lock held)."""
        job.state = "done"
        for key in job.keys:
            if self._jobs.get(key) is job:
                del self._jobs[key]
        self._finished += len(job.parts)
        self._report(final=not self._jobs)
        self._lock.notify_all()

    def _report(self, *, final: bool) -> None:
        if self._progress is None:
            return
        now = time.monotonic()
        due = now - self._batch_started >= PROGRESS_AFTER_S and now - self._last_report >= PROGRESS_EVERY_S
        if due or (final and self._reported):
            self._last_report, self._reported = now, True
            try:
                self._progress(self._finished, self._total)
            except Exception as exc:  # a reporting hook must never cost the build
                log.debug("render: progress callback failed: %s", exc)

    def _run_here(self, job: _Job) -> None:
        """Render a queued job in this process (lock not held)."""
        try:
            payloads = _run_job(job.parts)
        except Exception:
            with self._lock:
                self._finish(job)  # its caller renders it again and meets the error itself
            raise
        self._store(job, payloads, counted=True)
        with self._lock:
            self._finish(job)

    def take(self, key: str) -> bytes | None:
        """The payload for ``key`` once a queued or running job has made it; ``None`` when no
        job has it (or the job failed), and the caller renders it itself."""
        with self._lock:
            if key in self._kept:
                return self._kept.pop(key)
            job = self._jobs.get(key)
            if job is None:
                return None
            while job.state != "done":
                if job.state == "queued":
                    self._queue.remove(job)
                    if self._pool is None:
                        job.state = "running"
                        break
                    self._queue.appendleft(job)  # needed now: first in line
                    self._pump()
                self._lock.wait()
        if job.state == "running":  # ours to render, here
            self._run_here(job)
        with self._lock:
            if key in self._kept:
                return self._kept.pop(key)
        return cache.read_entry(cache.entry_path(key, job.folder))

    def drain(self, progress: Progress | None) -> int:
        """Finish every queued job; returns how many worker processes the batch had."""
        with self._lock:
            if progress is not None:
                self._progress = progress
            if self._pool is None and len(self._queue) >= POOL_MIN_JOBS:
                self._start_pool()
            self._pump()
        while True:
            with self._lock:
                if self._pool is not None and (self._queue or self._in_flight):
                    self._lock.wait()
                    continue
                if not self._queue:
                    return self.batch_workers
                job = self._queue.popleft()
                job.state = "running"
            self._run_here(job)

    def forget_queued(self) -> int:
        """Drop the jobs no worker has started (anyone waiting for one renders it itself)."""
        with self._lock:
            dropped = len(self._queue)
            for job in self._queue:
                job.state = "done"
                for key in job.keys:
                    if self._jobs.get(key) is job:
                        del self._jobs[key]
            self._queue.clear()
            self._lock.notify_all()
        return dropped

    def shutdown(self) -> None:
        """Stop the workers; queued jobs are dropped (their callers render them here)."""
        self.forget_queued()
        with self._lock:
            pool, self._pool = self._pool, None
            self._lock.notify_all()
        if pool is not None:
            pool.shutdown(wait=True, cancel_futures=True)
        collector = self._collector
        if collector is not None:
            with self._lock:
                self._lock.notify_all()
            collector.join(timeout=10)


@dataclass(frozen=True)
class PoolFacts:
    """The worker pool as it stands: how its processes were started and how many there are."""

    start_method: str
    processes: int


class RenderSession:
    """Everything rendering keeps in one process, in one object: the counts of what vl-convert did
    (here and in workers, per output kind), the last few compiled specs, the assembled runtime, and
    the queue and worker pool of :func:`prefetch`. The memo in front of the disk is
    :data:`ainotes.base.cache.MEMO`. :meth:`close` ends the pool (at exit, for the process's own
    :data:`SESSION`); :meth:`forget` makes it a fresh process as far as rendering goes."""

    def __init__(self) -> None:
        self.counts: Counter[str] = Counter()
        self.compiled_bases: OrderedDict[str, dict[str, Any]] = OrderedDict()
        self.runtime_text: dict[str, str] = {}  # the assembled runtime, per key
        self.scheduler = _Scheduler()

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


def prefetch(requests: Iterable[Request], *, progress: Progress | None = None) -> int:
    """Queue the renders a build will need, so that they run (in parallel, once each) while the
    build goes on; :func:`svg`, :func:`png`, :func:`vega` and :func:`runtime_js` then wait
    for their own result only. Returns how many renders were queued (cached or already queued
    ones are not). ``progress(done, total)`` hears about the batch every few seconds once it
    has run for a while."""
    return SESSION.scheduler.add(requests, progress)


def drain(*, progress: Progress | None = None) -> int:
    """Wait for every queued render; returns how many worker processes the batch used."""
    return SESSION.scheduler.drain(progress)


def render_many(requests: Iterable[Request], *, progress: Progress | None = None) -> RenderSummary:
    """Render everything ``requests`` name into the cache and wait for it (:func:`prefetch`
    then :func:`drain`)."""
    requests = list(requests)
    queued = SESSION.scheduler.add(requests, progress)
    workers = SESSION.scheduler.drain(progress)
    return RenderSummary(requested=len(requests), rendered=queued, workers=workers if queued else 0)


def stderr_progress(done: int, total: int) -> None:
    """A :data:`Progress` for commands that render many files: one line on stderr."""
    print(f"ainotes: {done} of {total} chart renders done", file=sys.stderr, flush=True)


def forget_queued() -> int:
    """Drop queued renders no worker has started: a new build calls this, so that an earlier
    build that stopped half-way (a page error under ``mkdocs serve``) leaves no stale work.
    Returns how many were dropped."""
    return SESSION.scheduler.forget_queued()


def shutdown() -> None:
    """Stop the render workers (a build's end; also run at exit). The next batch starts new ones."""
    SESSION.scheduler.shutdown()


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
