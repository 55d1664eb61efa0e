"""No module of ainotes uses another module's private names (``_name``).

Import-linter checks which modules import which; this checks what they take: ``from ainotes.x import
_name`` and ``module._name`` where ``module`` is an ainotes module imported in the file. A name that
another module needs is that module's public interface, so it loses its underscore.

Run by ``make check``; exits 1 listing every ``file:line``. Dunder names (``__version__``) are not private.
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = "ainotes"


def _private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def _module_of(path: Path) -> str:
    parts = path.relative_to(ROOT / "src").with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def problems(path: Path, module: str | None) -> list[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    found: list[str] = []
    aliases: dict[str, str] = {}  # local name -> the ainotes module it is bound to
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0 and (
                node.module == PACKAGE or node.module.startswith(PACKAGE + ".")):
            for alias in node.names:
                if _private(alias.name) and node.module != module:
                    found.append(f"{path.relative_to(ROOT)}:{node.lineno}: imports {node.module}.{alias.name}, "
                                 f"a private name of another module")
                aliases[alias.asname or alias.name] = f"{node.module}.{alias.name}"
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith(PACKAGE + ".") and alias.asname:
                    aliases[alias.asname] = alias.name
    for node in ast.walk(tree):
        if (isinstance(node, ast.Attribute) and _private(node.attr) and isinstance(node.value, ast.Name)
                and node.value.id in aliases and aliases[node.value.id] != module):
            found.append(f"{path.relative_to(ROOT)}:{node.lineno}: uses {aliases[node.value.id]}.{node.attr}, "
                         f"a private name of another module")
    return found


def main() -> int:
    paths = sorted((ROOT / "src" / PACKAGE).rglob("*.py")) + sorted((ROOT / "hooks").glob("*.py"))
    found = [line for path in paths
             for line in problems(path, _module_of(path) if "src" in path.parts else None)]
    for line in found:
        print(line)
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
