"""The edit loop: ``mkdocs serve`` of the real site against a plain MkDocs serve of the same pages.

The plain tree is the same copy with the ainotes hooks and Markdown extension taken out of its
``mkdocs.yml`` (its fences then show as code, its forms as text): what MkDocs and Material cost on
their own. Each serve runs as ``make serve`` runs it (``--strict`` for ours), bound to 127.0.0.1 on a
free port (ours on the same one for every warm serve of a run, as ``make serve`` always serves on one
address: the address is in a kept drawing's key), and is killed afterwards. Measured, for both, in one run:

* start: from launching the server to the first full page it answers (warm: caches kept from a
  serve before; cold: an empty render cache and shared cache, ours only differ);
* a prose edit: a sentence of a page changed, until the page served holds the new sentence;
* a fence edit (ours): a chart's title changed, until the page holds the new title (a title never
  drawn before, so the chart is drawn and rendered again).

The machine may be shared, so the warm serves alternate, ours then plain MkDocs, for several rounds (the
edited page put back before each), and the rows give medians, every round's figures and the load
average (1 min) when each round began.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path

from bench import sites
from bench.report import Row, seconds

WARM_START_RATIO_GOAL = 2.0
PROSE_EDIT_RATIO_GOAL = 1.2
FENCE_EDIT_EXTRA_GOAL_S = 1.0
EDITED_PAGE = "roofline.md"
PROSE_OLD = "bounds"  # its first use is in the page's first paragraph (outside any fence)
POLL_S = 0.05
START_TIMEOUT_S = 240.0
EDIT_TIMEOUT_S = 120.0


@dataclass(frozen=True)
class ServeTimes:
    start_s: float
    prose_edit_s: list[float]
    fence_edit_s: list[float]


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def plain_project(dest: Path) -> Path:
    """The real site's copy without the ainotes hooks and extension (and the settings only they read)."""
    project = sites.copy_project(dest)
    config = project / "mkdocs.yml"
    text = sites.without_top_level_keys(config.read_text(encoding="utf-8"), ("hooks",))
    # The extension's entry and its indented options, up to the next list item or top-level key.
    text = re.sub(r"^  - ainotes\.markdown:\n(?:(?:    .*|\s*#.*)?\n)*", "", text, flags=re.M)
    config.write_text(text, encoding="utf-8")
    return project


def _get(url: str) -> str | None:
    try:
        with urllib.request.urlopen(url, timeout=30) as response:
            return response.read().decode("utf-8", "replace")
    except (urllib.error.URLError, OSError, TimeoutError):
        return None


def _wait_for(url: str, test, timeout_s: float) -> float:
    start = time.perf_counter()
    while time.perf_counter() - start < timeout_s:
        page = _get(url)
        if page is not None and test(page):
            return time.perf_counter() - start
        time.sleep(POLL_S)
    raise TimeoutError(f"{url}: not served as expected within {timeout_s:.0f} s")


def _edit(path: Path, old: str, new: str) -> None:
    text = path.read_text(encoding="utf-8")
    if old not in text:
        raise ValueError(f"{path}: {old!r} is not in it")
    path.write_text(text.replace(old, new, 1), encoding="utf-8")


def serve_times(project: Path, env: dict[str, str], *, strict: bool, edits: int, fence: bool,
                tag: str = "", port: int | None = None) -> ServeTimes:
    """Start ``mkdocs serve`` of ``project``, time its start and ``edits`` prose (and fence) edits, stop it.
    ``tag`` makes this serve's fence titles its own (a title drawn before would come from the kept drawings).
    ``port``: the one to serve on (default: a free one). ``make serve`` serves on one address every time, and
    the site's address is part of a kept drawing's key (its embed snippets name it), so a warm start must
    serve where the serve that warmed the caches did."""
    port = _free_port() if port is None else port
    command = [sys.executable, "-m", "mkdocs", "serve", "--dev-addr", f"127.0.0.1:{port}",
               "-f", str(project / "mkdocs.yml"), *(["--strict"] if strict else [])]
    page_url = f"http://127.0.0.1:{port}/{EDITED_PAGE.removesuffix('.md')}/"
    page = project / "docs" / EDITED_PAGE
    with tempfile.TemporaryFile() as log:
        launched = time.perf_counter()
        proc = subprocess.Popen(command, cwd=project, env={**os.environ, **env}, stdout=log, stderr=subprocess.STDOUT,
                                start_new_session=True)
        try:
            _wait_for(page_url, lambda text: "</html>" in text, START_TIMEOUT_S)
            start_s = time.perf_counter() - launched
            prose, fences = [], []
            for n in range(edits):
                word = f"Reachable{n}x"
                previous = PROSE_OLD if n == 0 else f"Reachable{n - 1}x"
                _edit(page, previous, word)
                prose.append(_wait_for(page_url, lambda text, w=word: w in text, EDIT_TIMEOUT_S))
                if fence:
                    title = f"Roofs{tag}{n}z"
                    text = page.read_text(encoding="utf-8")
                    match = re.search(r"^title: (.+)$", text, re.M)
                    if match is None:
                        raise ValueError(f"{page}: no fence title to edit")
                    _edit(page, match.group(0), f"title: {title}")
                    fences.append(_wait_for(page_url, lambda text, t=title: t in text, EDIT_TIMEOUT_S))
        except (TimeoutError, ValueError) as exc:
            log.seek(0)
            tail = "\n".join(log.read().decode("utf-8", "replace").strip().splitlines()[-8:])
            raise RuntimeError(f"{exc}\n{tail}") from None
        finally:
            os.killpg(proc.pid, signal.SIGTERM)
            try:
                proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
    return ServeTimes(start_s, prose, fences)


def _load_1min() -> float:
    return os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")


def _listed(values: list[float]) -> str:
    return ", ".join(f"{v:.2f}" for v in values)


@dataclass
class _Rounds:
    """The warm serves of every round, ours and plain MkDocs side by side."""

    ours: list[ServeTimes]
    plain: list[ServeTimes]
    load: list[float]  # 1-min load average when each round began

    def starts(self) -> tuple[float, float, list[float]]:
        ours, plain = [t.start_s for t in self.ours], [t.start_s for t in self.plain]
        return statistics.median(ours), statistics.median(plain), [o / p for o, p in zip(ours, plain, strict=True)]

    def prose(self) -> tuple[float, float, list[float]]:
        ours = [statistics.median(t.prose_edit_s) for t in self.ours]
        plain = [statistics.median(t.prose_edit_s) for t in self.plain]
        return statistics.median(ours), statistics.median(plain), [o / p for o, p in zip(ours, plain, strict=True)]

    def fence(self) -> tuple[float, list[float]]:
        ours = [statistics.median(t.fence_edit_s) for t in self.ours]
        plain = [statistics.median(t.prose_edit_s) for t in self.plain]
        return statistics.median(ours), [o - p for o, p in zip(ours, plain, strict=True)]


def measure_serve(work: Path, *, edits: int = 3, rounds: int = 3) -> list[Row]:
    """The rows of part (f): ours against plain MkDocs, warm and cold starts, prose and fence edits."""
    root = work / "serve"
    shutil.rmtree(root, ignore_errors=True)
    ours, plain = sites.copy_project(root / "ours"), plain_project(root / "plain")
    pages = {project: (project / "docs" / EDITED_PAGE).read_text(encoding="utf-8") for project in (ours, plain)}
    caches = {"AINOTES_CACHE_DIR": str(root / "cache"), "AINOTES_SHARED_CACHE_DIR": str(root / "shared")}
    # Warm: the caches a serve of the same tree on the same address filled (as an author's second `make serve`).
    port = _free_port()
    serve_times(ours, caches, strict=True, edits=0, fence=False, port=port)
    measured = _Rounds([], [], [])
    for n in range(rounds):
        measured.load.append(_load_1min())
        for project in (ours, plain):
            (project / "docs" / EDITED_PAGE).write_text(pages[project], encoding="utf-8")
        measured.ours.append(serve_times(ours, caches, strict=True, edits=edits, fence=True, tag=f"r{n}", port=port))
        measured.plain.append(serve_times(plain, caches, strict=False, edits=edits, fence=False))
    cold_caches = {"AINOTES_CACHE_DIR": str(root / "cold-cache"), "AINOTES_SHARED_CACHE_DIR": str(root / "cold-shared")}
    cold = serve_times(sites.copy_project(root / "ours-cold"), cold_caches, strict=True, edits=0, fence=False)
    shutil.rmtree(root, ignore_errors=True)
    start, base_start, start_ratios = measured.starts()
    prose, base_prose, prose_ratios = measured.prose()
    fence, fence_extra = measured.fence()
    start_ratio, prose_ratio = start / base_start, prose / base_prose
    each = f"{rounds} alternating rounds; 1-min load at each round's start: {_listed(measured.load)}"
    return [
        Row("f", "make serve, warm caches: launch to the first page served, ours (--strict) vs plain MkDocs "
            f"(same pages, ainotes hooks and extension removed; medians of {each})",
            f"{seconds(start)} vs {seconds(base_start)} → {start_ratio:.2f}× (each round: {_listed(start_ratios)}×)",
            f"≤ {WARM_START_RATIO_GOAL:.1f}×", start_ratio <= WARM_START_RATIO_GOAL),
        Row("f", "make serve, empty render and shared caches: launch to the first page served "
            "(1 run, after the rounds)",
            f"{seconds(cold.start_s)} (plain MkDocs' median {seconds(base_start)})"),
        Row("f", f"a prose edit of {EDITED_PAGE} until the page served shows it (median of each round's {edits} "
            "edits; the median of the rounds)",
            f"{seconds(prose)} vs {seconds(base_prose)} → {prose_ratio:.2f}× (each round: {_listed(prose_ratios)}×)",
            f"≤ {PROSE_EDIT_RATIO_GOAL:.1f}×", prose_ratio <= PROSE_EDIT_RATIO_GOAL),
        Row("f", f"a fence edit (a chart's title never drawn before) of {EDITED_PAGE} until the page shows it "
            f"(median of each round's {edits}; the median of the rounds)",
            f"{seconds(fence)} vs plain MkDocs' prose edit {seconds(base_prose)} → +{fence - base_prose:.2f} s "
            f"(each round: +{', +'.join(f'{v:.2f}' for v in fence_extra)} s)",
            f"≤ +{FENCE_EDIT_EXTRA_GOAL_S:.0f} s", fence - base_prose <= FENCE_EDIT_EXTRA_GOAL_S),
    ]
