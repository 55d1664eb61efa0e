"""What a ``mkdocs serve`` rebuild leaves for after its pages are served: the embed files, and starting V8.

A chart's embed files (both stills, the PNG, the Vega-Lite JSON, the standalone page, and
``embed/manifest.json``) are linked from its page but never part of it, and MkDocs serves no page
until its build has returned. So under ``mkdocs serve`` the build writes the pages and the assets
they load, and hands the embed files to :func:`start`, which writes them in a background thread
once the requests waiting for the rebuild have been answered (:data:`ANSWER_FIRST_S`: a chart drawn
anew has its PNG rendered there, about 0.2 s during which vl-convert holds Python's lock). A download
asked for in that moment may not be there yet; the page never waits for it.

The next rebuild empties the site folder and writes every embed file again, so it calls :func:`stop`
first (``hooks/notes.py``: ``on_config``): the work still pending ends at its next file and is waited
for, never cut in the middle of one. A chart drawn anew whose files were not kept before the stop is
drawn again for its files by the rebuild that has none (:meth:`ainotes.build.site.NotesSite.embed_files`),
in its own deferred work. So a rebuild whose deferred work has finished (the last one, once the author
stops editing) leaves exactly the files a clean build writes (tests/test_serve_deferred.py).

:func:`start_engine_when_idle` starts vl-convert's V8 (about 0.8 s of a core, once a process) once the
serve has been idle for :data:`ENGINE_IDLE_S` after a build, so that the first chart edit does not
wait for it, and no edit made before then shares the machine with it.

Process-wide state, as one ``mkdocs serve`` is one process: at most one piece of work pending.
"""

from __future__ import annotations

import threading
from collections.abc import Callable

from ainotes.base.errors import InputError

ANSWER_FIRST_S = 0.15  # the pages' requests, waiting on the rebuild, are answered in a few milliseconds
ENGINE_IDLE_S = 2.0  # no build for this long after one: the author is reading, the machine is free

_lock = threading.Lock()  # MkDocs' build thread, the timers and tests call in
_pending: tuple[threading.Thread, threading.Event] | None = None
_engine_timer: threading.Timer | None = None
_engine_started = False


def start(work: Callable[[Callable[[], bool]], None], *, report: Callable[[str], None],
          after_s: float | None = None) -> None:
    """Run ``work(stopped)`` in a background thread ``after_s`` (default :data:`ANSWER_FIRST_S`) seconds from now,
    once any work started
    before has ended; ``stopped()`` tells it that :func:`stop` was called (it then ends at its next file).
    A user's mistake it meets (:class:`~ainotes.base.errors.InputError`, say a preset file broken since
    the page was drawn) goes to ``report`` as its one line; the next rebuild meets it again on its page."""
    global _pending
    stop_event = threading.Event()
    pause_s = ANSWER_FIRST_S if after_s is None else after_s

    def run() -> None:
        if stop_event.wait(pause_s):
            return  # stopped before it began
        try:
            work(stop_event.is_set)
        except InputError as exc:
            report(str(exc))

    with _lock:
        _end_pending(stop_first=False)
        thread = threading.Thread(target=run, name="ainotes-embed-files", daemon=True)
        _pending = (thread, stop_event)
        thread.start()


def stop() -> None:
    """A new build begins: the pending work ends at its next file and is waited for; V8 is not started now."""
    global _engine_timer
    with _lock:
        if _engine_timer is not None:
            _engine_timer.cancel()
            _engine_timer = None
        _end_pending(stop_first=True)


def wait() -> None:
    """Wait until the work :func:`start` was given last has finished, all of it (at once when there is none)."""
    with _lock:
        _end_pending(stop_first=False)


def pending() -> bool:
    """Whether work handed to :func:`start` is still running."""
    held = _pending
    return held is not None and held[0].is_alive()


def _end_pending(*, stop_first: bool) -> None:
    global _pending
    held, _pending = _pending, None
    if held is not None:
        if stop_first:
            held[1].set()
        held[0].join()


def start_engine_when_idle(start_engine: Callable[[], None], *, idle_s: float = ENGINE_IDLE_S) -> bool:
    """Call ``start_engine()`` (:func:`ainotes.render.start_engine`) in a background thread once ``idle_s``
    seconds pass with no new build (:func:`stop` puts it off; call this again after each build). Once a
    process; returns whether it is still to come. A render asked for before V8 is up starts it itself."""
    global _engine_timer

    def fire() -> None:
        global _engine_started
        with _lock:
            if _engine_started:
                return
            _engine_started = True
        start_engine()

    with _lock:
        if _engine_started:
            return False
        if _engine_timer is not None:
            _engine_timer.cancel()
        _engine_timer = threading.Timer(idle_s, fire)
        _engine_timer.name, _engine_timer.daemon = "ainotes-start-engine", True
        _engine_timer.start()
    return True
