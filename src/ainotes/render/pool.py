"""Many renders at once: the queue of render jobs, the worker pool that runs them, and the batch's progress.

A build announces the renders it will need (:class:`Request`); each distinct cache key is rendered
once, in a pool of worker processes sized to the usable cores and started with *spawn* (vl-convert
runs one V8 engine per process, so threads do not help and a forked copy of a started engine
hangs), and only when there is enough work to pay for a worker's start-up.
"""

from __future__ import annotations

import functools
import logging
import math
import multiprocessing
import os
import threading
import time
from collections import Counter, deque
from collections.abc import Callable, Iterable
from concurrent.futures import Future, ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple

from ainotes.base import cache
from ainotes.base.cache import cache_dir, shared_dir
from ainotes.render.engine import Part, png_key, runtime_key, svg_key, vega_key, vega_lite_version

log = logging.getLogger("ainotes.render")

WORKERS_ENV = "AINOTES_RENDER_WORKERS"  # an upper bound on worker processes; 0 renders in-process only
# A worker costs 0.7-1 s of CPU to start (interpreter, imports, V8's start, which the build
# process then skips); one render 0.02-0.2 s. Fewer queued renders than POOL_MIN_JOBS are
# cheaper in-process; a worker is added for every JOBS_PER_WORKER renders waiting (about
# 1.5 s of work, what another start costs), up to the usable cores.
POOL_MIN_JOBS = 3
JOBS_PER_WORKER = 16
PROGRESS_AFTER_S = 2.0  # a render batch that ends sooner says nothing
PROGRESS_EVERY_S = 3.0


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


@dataclass(eq=False)
class Job:
    parts: tuple[Part, ...]
    keys: tuple[str, ...]  # one per output, in the order Engine.run_job returns them
    folder: Path
    state: str = "queued"  # queued → running → done


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


class Scheduler:
    """Queued renders, the worker pool and the batch's progress.

    A batch runs from the first render queued after a :meth:`drain` (or since the start) to the next
    :meth:`drain`: one build's renders, however their jobs happen to interleave with the pages, so
    its progress counts them all ("9 of 9", never a page's "3 of 3" and then "6 of 6").

    Jobs run in a spawn-started :class:`ProcessPoolExecutor`; at most one job per wanted
    worker is in flight (one more once all are started), which is also how many processes
    the executor starts. Completions
    go through a queue to one collector thread that writes the cache entries and hands out
    the next jobs, so the executor's own threads never wait on our lock.
    """

    def __init__(self, counts: Counter[str], run_here: Callable[[tuple[Part, ...]], list[bytes]],
                 run_in_worker: Callable[[tuple[Part, ...]], list[bytes]]) -> None:
        """``counts``: where renders are counted (a worker's own counts are never read);
        ``run_here`` renders a job in this process, ``run_in_worker`` (a module-level function,
        which a worker imports by name) in a worker."""
        self._counts = counts
        self._run_job_here = run_here
        self._run_job_in_worker = run_in_worker
        self._lock = threading.Condition(threading.RLock())
        self._queue: deque[Job] = deque()
        self._jobs: dict[str, Job] = {}  # key → its job while queued or running
        self._kept: dict[str, bytes] = {}  # results the disk would not take
        self._pool: ProcessPoolExecutor | None = None
        self._collector: threading.Thread | None = None
        self._completions: deque[tuple[Job, Future[list[bytes]] | None]] = deque()
        self._in_flight = 0
        self._limit = 0
        self.batch_workers = 0  # the most jobs in flight at once in this batch: worker processes used
        self._progress: Progress | None = None
        self._total = self._finished = self.batch_workers = 0
        self._batch_started = self._last_report = 0.0
        self._reported: tuple[int, int] | None = None  # the last count given, if any
        self._batch_open = False
        # Without a pool, queued jobs run in one thread of this process as soon as they are queued (mkdocs serve:
        # RenderSession.render_while_building), else when their result is first asked for (take, drain).
        self.in_background = False
        self._runner: threading.Thread | None = None

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
                if not self._batch_open:
                    self._new_batch()
                for key in job.keys:
                    self._jobs[key] = job
                self._queue.append(job)
                self._total += len(job.parts)
                new += 1
            if self._pool is None and len(self._queue) >= POOL_MIN_JOBS:
                self._start_pool()
            self._pump()
            if self._pool is None and self.in_background and self._queue and self._runner is None:
                self._runner = threading.Thread(target=self._run_queued, name="ainotes-render-thread", daemon=True)
                self._runner.start()
        return new

    def _run_queued(self) -> None:
        """Render the queued jobs here, one after another, while the build goes on (vl-convert lets go of
        Python while it compiles and draws, so the build's own thread keeps converting pages); ends when
        none is left. A job that fails is left to whoever asks for its result, who meets the error."""
        while True:
            with self._lock:
                if not self._queue or self._pool is not None:
                    self._runner = None
                    self._lock.notify_all()
                    return
                job = self._queue.popleft()
                job.state = "running"
            try:
                self._run_here(job)
            except Exception as exc:
                log.debug("render: job failed in the render thread (%s); left to its caller", exc)

    def _job_for(self, request: Request) -> Job | None:
        """The job for a request, or ``None`` when every output it names is cached or queued."""
        parts: list[Part] = []
        keys: list[str] = []
        folder = shared_dir() if request.kind == "runtime" else cache_dir()
        for one in request.parts if request.kind == "group" else (request,):
            part, part_keys = self._part_for(one)
            if not all(key in cache.MEMO or key in self._jobs or key in self._kept
                       or cache.entry_path(key, folder).exists() for key in part_keys):
                parts.append(part)
                keys.extend(part_keys)
        return Job(tuple(parts), tuple(keys), folder) if parts else None

    @staticmethod
    def _part_for(request: Request) -> tuple[Part, tuple[str, ...]]:
        spec = request.spec
        if request.kind == "runtime":
            return Part("runtime", None, "", ()), (runtime_key(),)
        if request.kind in ("svg", "vega") and isinstance(spec, dict):
            version = vega_lite_version(spec)
            if request.kind == "svg":
                keys = (svg_key(spec, version), *(png_key(spec, version, s) for s in request.png_scales))
                return Part("svg", spec, version, request.png_scales), keys
            return Part("vega", spec, version, ()), (vega_key(spec, version),)
        raise ValueError(f"render: a {request.kind!r} request needs a spec dict" if request.kind in ("svg", "vega")
                         else f"render: unknown request kind {request.kind!r}")

    def _new_batch(self) -> None:
        self._total = self._finished = self.batch_workers = 0
        self._batch_started = self._last_report = time.monotonic()
        self._reported = None
        self._batch_open = True

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
                future = pool.submit(self._run_job_in_worker, job.parts)
            except Exception as exc:  # a broken or shut-down pool: the rest is rendered here
                log.debug("render: worker pool unusable (%s); rendering in this process", exc)
                job.state = "queued"
                self._queue.appendleft(job)
                self._pool = None
                return
            self._in_flight += 1
            self.batch_workers = max(self.batch_workers, min(self._in_flight, wanted))
            future.add_done_callback(functools.partial(self._completed, job))

    def _completed(self, job: Job, future: Future[list[bytes]]) -> None:
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

    def _store(self, job: Job, payloads: list[bytes], *, counted: bool) -> None:
        """Write a finished job's entries (outside the lock: disk work)."""
        if not counted:  # rendered in a worker: count it here, where the counters are read
            for part in job.parts:
                self._counts[part.kind] += 1
                self._counts["png"] += len(part.scales)
        for key, payload in zip(job.keys, payloads, strict=True):
            if not cache.write_entry(cache.entry_path(key, job.folder), payload):
                with self._lock:
                    self._kept[key] = payload

    def _finish(self, job: Job) -> None:
        """Mark a job done, wake its waiters, report progress (lock held)."""
        job.state = "done"
        for key in job.keys:
            if self._jobs.get(key) is job:
                del self._jobs[key]
        self._finished += len(job.parts)
        self._report(final=False)
        self._lock.notify_all()

    def _report(self, *, final: bool) -> None:
        if self._progress is None:
            return
        now = time.monotonic()
        due = now - self._batch_started >= PROGRESS_AFTER_S and now - self._last_report >= PROGRESS_EVERY_S
        count = (self._finished, self._total)
        # A batch's last count when it said anything before, unless that was this count; else every so often.
        if (self._reported not in (None, count)) if final else due:
            self._last_report, self._reported = now, count
            try:
                self._progress(*count)
            except Exception as exc:  # a reporting hook must never cost the build
                log.debug("render: progress callback failed: %s", exc)

    def _run_here(self, job: Job) -> None:
        """Render a queued job in this process (lock not held)."""
        try:
            payloads = self._run_job_here(job.parts)
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
                    while self._runner is not None:  # the render thread's last job
                        self._lock.wait()
                    if self._batch_open:  # the batch ends here: its last count, if any was given
                        self._report(final=True)
                        self._batch_open = False
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
            self._batch_open = False  # a new build counts its own renders
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


