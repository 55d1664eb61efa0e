"""Rows of the results table, the table itself, and the machine it was measured on."""

from __future__ import annotations

import datetime as dt
import os
import platform
import sys
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path

PACKAGES = ("mkdocs", "mkdocs-material", "altair", "vl-convert-python")


@dataclass(frozen=True)
class Row:
    """One line of the table. ``met`` is None where the row has no goal."""

    part: str
    measure: str
    result: str
    goal: str = "—"
    met: bool | None = None

    @property
    def verdict(self) -> str:
        return {True: "yes", False: "**no**", None: "—"}[self.met]


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def table(rows: list[Row]) -> str:
    lines = ["| part | measure | result | goal | met |", "| --- | --- | --- | --- | --- |"]
    lines += [f"| {r.part} | {_cell(r.measure)} | {_cell(r.result)} | {_cell(r.goal)} | {r.verdict} |" for r in rows]
    return "\n".join(lines)


def cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text(encoding="utf-8").splitlines():
            if line.lower().startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def machine_lines() -> list[str]:
    """Platform, CPU, cores, Python, package versions, load and date, one per line."""
    usable = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    versions = []
    for name in PACKAGES:
        try:
            versions.append(f"{name} {metadata.version(name)}")
        except metadata.PackageNotFoundError:
            versions.append(f"{name} (not installed)")
    load = ", ".join(f"{x:.2f}" for x in os.getloadavg()) if hasattr(os, "getloadavg") else "n/a"
    return [
        f"- Date: {dt.datetime.now(dt.UTC).strftime('%Y-%m-%d %H:%M UTC')}",
        f"- Platform: {platform.platform()}",
        f"- CPU: {cpu_model()}; {os.cpu_count()} logical cores, {usable} usable by this process",
        f"- Load average at start (1, 5, 15 min): {load}",
        f"- Python {platform.python_version()} ({sys.executable})",
        f"- Packages: {', '.join(versions)}",
    ]


def seconds(value: float) -> str:
    return f"{value:.2f} s"


def ms(value_s: float) -> str:
    return f"{value_s * 1000:.1f} ms"


def kb(n_bytes: float) -> str:
    """Bytes in kB of 1000 bytes, the unit the goals are read in."""
    return f"{n_bytes / 1000:.1f} kB"


def mib(n_bytes: float) -> str:
    return f"{n_bytes / 2**20:.0f} MiB"
