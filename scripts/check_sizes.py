"""No file in src/ over 800 lines, no function over 80 (the developer guide's limits).

A function's length runs from its ``def`` (decorators included) to its last line, docstring and
comments included: what a reader has to hold at once. Prints one line per breach, as
``path:line: what``, and exits 1 when there is any.
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

MAX_FILE_LINES = 800
MAX_FUNCTION_LINES = 80
ROOT = Path(__file__).resolve().parent.parent


def breaches(path: Path) -> list[str]:
    """Each limit ``path`` breaks, as a ``path:line: what`` line."""
    text = path.read_text(encoding="utf-8")
    name = (path.relative_to(ROOT) if path.is_relative_to(ROOT) else path).as_posix()
    found = []
    lines = text.count("\n") + (0 if text.endswith("\n") or not text else 1)
    if lines > MAX_FILE_LINES:
        found.append(f"{name}:1: {lines} lines (at most {MAX_FILE_LINES}): split it by what it does")
    for node in ast.walk(ast.parse(text, filename=name)):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            start = min([node.lineno, *(d.lineno for d in node.decorator_list)])
            length = (node.end_lineno or node.lineno) - start + 1
            if length > MAX_FUNCTION_LINES:
                found.append(f"{name}:{start}: function {node.name} is {length} lines (at most {MAX_FUNCTION_LINES})")
    return found


def main(argv: list[str]) -> int:
    roots = [Path(arg).resolve() for arg in argv] or [ROOT / "src"]
    found = [line for root in roots for path in sorted(root.rglob("*.py")) for line in breaches(path)]
    for line in found:
        print(line)
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
