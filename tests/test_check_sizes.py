"""scripts/check_sizes.py: the developer guide's limits (800 lines a file, 80 a function), as make check runs it."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

SCRIPT = Path(__file__).resolve().parent.parent / "scripts" / "check_sizes.py"


def _run(folder: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, str(SCRIPT), str(folder)], capture_output=True, text=True, check=False)


def test_a_long_function_and_a_long_file_are_named_with_their_lines(tmp_path: Path) -> None:
    body = "".join(f"    x{i} = {i}\n" for i in range(80))  # def + 80 lines: 81
    (tmp_path / "long_function.py").write_text(f"\n\n@staticmethod\ndef grown():\n{body}", encoding="utf-8")
    (tmp_path / "long_file.py").write_text("".join(f"y{i} = {i}\n" for i in range(801)), encoding="utf-8")
    (tmp_path / "fine.py").write_text("def small():\n" + "".join(f"    z{i} = {i}\n" for i in range(78)),
                                      encoding="utf-8")
    result = _run(tmp_path)
    assert result.returncode == 1
    assert result.stdout.splitlines() == [
        f"{tmp_path.as_posix()}/long_file.py:1: 801 lines (at most 800): split it by what it does",
        f"{tmp_path.as_posix()}/long_function.py:3: function grown is 82 lines (at most 80)",  # from its decorator
    ]


def test_the_package_keeps_the_limits() -> None:
    result = _run(SCRIPT.parent.parent / "src")
    assert result.returncode == 0, result.stdout
