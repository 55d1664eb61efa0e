"""Sites that many test files only read, built once per test run and served from one address.

Under pytest-xdist every worker would otherwise build the real site again for each file that reads
it. Here the process that starts the run (the xdist controller, or the only process without xdist)
makes one folder and serves it on ``127.0.0.2`` and a free port, for the whole run; the workers learn
both through ``workerinput``. The first worker that needs a site builds it into that folder while
holding a file lock; the others wait on the lock and then read what it wrote. A build that failed is
recorded too, so every test that needs it fails with the build's own output instead of building again.

A test reads a shared site and never writes into it: a file added there would be seen by every
other test that lists the site's files. :meth:`SharedSites.scratch` gives a served folder of its own.
"""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import tempfile
import threading
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from browser_support import StaticServer
from sitebuild import Build, run_build

# Not the preview default 127.0.0.1:8000: the loopback network answers on all of 127/8, and a site
# published for another host and port than the default must work there.
HOST = "127.0.0.2"


@dataclass
class SharedBuild(Build):
    """One build of :class:`SharedSites`: where it lies, the address it was built for, how it was built."""

    url: str = ""  # the address the site was built for and is served at; ends with "/"
    origin: str = ""
    project: Path = field(default_factory=Path)  # the sources it was built from (a copy: never edit them)
    env: dict[str, str] = field(default_factory=dict)  # what the build ran with (site address, render cache)


class SharedSites:
    """The run's shared sites folder, its server (in the owning process only), and the builds in it."""

    def __init__(self, root: Path, origin: str, server: StaticServer | None = None) -> None:
        self.root = root
        self.origin = origin
        self.served = root / "served"
        self._server = server

    @classmethod
    def start(cls) -> SharedSites:
        root = Path(tempfile.mkdtemp(prefix="ainotes-shared-sites-"))
        (root / "served").mkdir()
        server = StaticServer(root / "served", host=HOST).start()
        return cls(root, server.origin, server)

    def stop(self) -> None:
        if self._server is not None:
            self._server.stop()
            shutil.rmtree(self.root, ignore_errors=True)

    def url(self, name: str) -> str:
        return f"{self.origin}/{name}/"

    def _env(self, name: str, env: dict[str, str] | None) -> dict[str, str]:
        cache = self.root / "caches" / name
        return {"AINOTES_SITE_URL": self.url(name), "AINOTES_CACHE_DIR": str(cache / "render"),
                "AINOTES_SHARED_CACHE_DIR": str(self.root / "caches" / "shared"),  # the Vega bundle: code only
                "XDG_CACHE_HOME": str(cache / "xdg"), **(env or {})}

    def render_cache_of(self, name: str) -> dict[str, str]:
        """The environment that points a build at the render cache of the site ``name``: a site that
        differs from another in a few charts draws only those (the rest are copied from that cache)."""
        return {"AINOTES_CACHE_DIR": str(self.root / "caches" / name / "render")}

    def _lock(self, name: str):
        (self.root / "work").mkdir(exist_ok=True)
        lock = (self.root / "work" / f"{name}.lock").open("a")
        fcntl.flock(lock, fcntl.LOCK_EX)
        return lock

    def _build_holding(self, name: str, prepare: Callable[[Path], Path], env: dict[str, str]) -> dict:
        record = self.root / "work" / f"{name}.json"
        if not record.exists():
            project = prepare(self.root / "work" / name)
            done = run_build(project, self.served / name, env=env)
            record.write_text(json.dumps({"returncode": done.returncode, "output": done.output,
                                          "project": str(project)}), encoding="utf-8")
        return json.loads(record.read_text(encoding="utf-8"))

    def build(self, name: str, prepare: Callable[[Path], Path], env: dict[str, str] | None = None) -> SharedBuild:
        """The site ``name``, built (once per run) from the project ``prepare(folder)`` writes and returns,
        with ``env`` added to the build's environment.

        ``name`` is also the site's path on the server. Every caller of one name must pass the same
        ``prepare`` and ``env``: whichever comes first builds.
        """
        full_env = self._env(name, env)
        lock = self._lock(name)
        try:
            data = self._build_holding(name, prepare, full_env)
        finally:
            lock.close()  # closing the file releases the lock
        return SharedBuild(data["returncode"], data["output"], self.served / name, url=self.url(name),
                           origin=self.origin, project=Path(data["project"]), env=full_env)

    def prebuild(self, builds: list[tuple[str, Callable[[Path], Path], dict[str, str] | None]]) -> threading.Thread:
        """Start ``builds`` (name, prepare, env) one after another in a thread, their locks taken now: a
        worker that asks for one meanwhile waits for it instead of building it again."""
        held = [(self._lock(name), name, prepare, self._env(name, env)) for name, prepare, env in builds]

        def run() -> None:
            for lock, name, prepare, env in held:
                try:
                    self._build_holding(name, prepare, env)
                finally:
                    lock.close()

        thread = threading.Thread(target=run, name="ainotes-prebuild", daemon=True)
        thread.start()
        return thread

    def scratch(self) -> tuple[Path, str]:
        """A new, empty served folder for one test's own pages, and its address (ends with "/")."""
        name = f"scratch-{os.getpid()}-{uuid.uuid4().hex[:8]}"
        (self.served / name).mkdir()
        return self.served / name, self.url(name)
