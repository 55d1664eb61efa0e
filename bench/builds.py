"""One real MkDocs build in a subprocess: wall time and the child's peak resident memory."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path


class BuildError(RuntimeError):
    """A benchmark build exited non-zero; the message carries the end of its output."""


@dataclass(frozen=True)
class BuildRun:
    """What one build cost."""

    seconds: float
    max_rss_bytes: int  # ru_maxrss of the build process (Linux reports KiB)
    output: str
    cpu_seconds: float = 0.0  # user + system time of the build and the workers it reaped


def build(project: Path, site_dir: Path, cache_dir: Path, *, timeout_s: float = 900.0,
          env: dict[str, str] | None = None) -> BuildRun:
    """``python -m mkdocs build --strict -q`` of ``project`` into ``site_dir`` with its own render cache.

    The child is reaped with :func:`os.wait4`, whose resource usage belongs to
    that one child (``RUSAGE_CHILDREN`` would be the maximum over every child
    so far); its CPU time includes the render workers it reaped. CPU time says
    what a build costs when other work shares the machine and wall time does not.
    Raises :class:`BuildError` when the build fails or runs past
    ``timeout_s``. ``env`` adds to the environment (e.g. ``AINOTES_RENDER_WORKERS``).
    """
    if site_dir.exists():
        shutil.rmtree(site_dir)
    command = [sys.executable, "-m", "mkdocs", "build", "--strict", "-q",
               "-f", str(project / "mkdocs.yml"), "-d", str(site_dir)]
    env = {**os.environ, "AINOTES_CACHE_DIR": str(cache_dir), **(env or {})}
    with tempfile.TemporaryFile() as log:
        start = time.perf_counter()
        proc = subprocess.Popen(command, cwd=project, env=env, stdout=log, stderr=subprocess.STDOUT)
        timer = threading.Timer(timeout_s, proc.kill)
        timer.start()
        try:
            _, status, usage = os.wait4(proc.pid, 0)
        finally:
            timer.cancel()
        seconds = time.perf_counter() - start
        proc.returncode = os.waitstatus_to_exitcode(status)  # reaped here; Popen must not wait again
        log.seek(0)
        output = log.read().decode("utf-8", errors="replace")
    if proc.returncode != 0:
        tail = "\n".join(output.strip().splitlines()[-8:])
        why = f"timed out after {timeout_s:.0f} s" if seconds >= timeout_s else f"exit {proc.returncode}"
        raise BuildError(f"build of {project.name} failed ({why}):\n{tail}")
    return BuildRun(seconds=seconds, max_rss_bytes=usage.ru_maxrss * 1024, output=output,
                    cpu_seconds=usage.ru_utime + usage.ru_stime)


def cold_build(project: Path, site_dir: Path, scratch: Path, **kwargs) -> BuildRun:
    """A build with a fresh, empty render cache, removed afterwards."""
    cache = Path(tempfile.mkdtemp(prefix="cold-cache-", dir=scratch))
    try:
        return build(project, site_dir, cache, **kwargs)
    finally:
        shutil.rmtree(cache, ignore_errors=True)
